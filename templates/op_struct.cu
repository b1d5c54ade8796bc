struct {{ name }} {
{% for n in nested %}{{ n }}
{% endfor %}    typedef {{ elem }} elem;
{% for p in params %}    // monoscan:snippet-begin param {{ p.name }}
    static constexpr {{ p.ctype }} {{ p.name }} = {{ p.value }};
    // monoscan:snippet-end
{% endfor %}    static __device__ __forceinline__ elem identity() {
        // monoscan:snippet-begin identity
        return {{ identity }};
        // monoscan:snippet-end
    }
    static __device__ __forceinline__ elem combine(const elem& a, const elem& b) {
        // monoscan:snippet-begin combine
{{ combine }}
        // monoscan:snippet-end
    }
};
