{% include "lib/tile.cuh" %}
{% include "lib/tile_scan.cuh" %}
