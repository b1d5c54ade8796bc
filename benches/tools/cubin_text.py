#!/usr/bin/env python3
"""Compile CUDA sources with NVRTC under two option sets and compare their machine code.

Usage:
    cubin_text.py [--nvrtc PATH/libnvrtc.so.13] [--arch 90] [--time]
                  --a="OPTS" --b="OPTS" SOURCE.cu...

(the `=` form: the options themselves start with `--`).

For each source, compiles it once with the options of `--a` and once with those of `--b`
(both get `--gpu-architecture=sm_<arch>`), reads the CUBIN (an ELF file), and compares every
`.text.*` section (one per kernel) byte for byte. Prints one line per source: `same` when
every kernel's code is identical, else the kernels that differ; with `--time`, the compile
time of each option set. Exits 1 when any source differs, 2 on a compile failure.

This is how the NVRTC options and template changes that are meant to cost no run time are
checked: identical `.text` sections are identical machine code.
"""

import argparse
import ctypes
import os
import struct
import sys
import time


def load_nvrtc(path):
    if path is None:
        folder = os.environ.get("MONOSCAN_NVRTC_DIR")
        path = os.path.join(folder, "libnvrtc.so.13") if folder else "libnvrtc.so.13"
    # NVRTC opens its builtins library by name: load the one beside it first, so that it is
    # found without LD_LIBRARY_PATH.
    builtins = os.path.join(os.path.dirname(path), "libnvrtc-builtins.so.13.0")
    if os.path.exists(builtins):
        ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(path)
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    return lib


def check(lib, rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: {lib.nvrtcGetErrorString(rc).decode()}")


def compile_cubin(lib, source, options):
    """The CUBIN of `source` compiled with `options`, and the seconds it took."""
    prog = ctypes.c_void_p()
    check(
        lib,
        lib.nvrtcCreateProgram(
            ctypes.byref(prog), source.encode(), b"source.cu", 0, None, None
        ),
        "nvrtcCreateProgram",
    )
    opts = [o.encode() for o in options]
    argv = (ctypes.c_char_p * len(opts))(*opts)
    start = time.perf_counter()
    rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
    seconds = time.perf_counter() - start
    if rc != 0:
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        raise RuntimeError("compile failed:\n" + log.value.decode(errors="replace"))
    size = ctypes.c_size_t()
    check(lib, lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
    image = ctypes.create_string_buffer(size.value)
    check(lib, lib.nvrtcGetCUBIN(prog, image), "nvrtcGetCUBIN")
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return image.raw, seconds


def text_sections(elf):
    """`{name: bytes}` of the `.text.*` sections of a 64-bit little-endian ELF image."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise RuntimeError("not a 64-bit little-endian ELF image")
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = []
    for i in range(shnum):
        off = shoff + i * shentsize
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", elf, off)
        headers.append((name, offset, size))
    _, str_off, str_size = headers[shstrndx]
    names = elf[str_off : str_off + str_size]
    sections = {}
    for name, offset, size in headers:
        label = names[name : names.index(b"\0", name)].decode()
        if label.startswith(".text."):
            sections[label] = elf[offset : offset + size]
    return sections


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nvrtc", help="path of libnvrtc (default: $MONOSCAN_NVRTC_DIR)")
    p.add_argument("--arch", default="90")
    p.add_argument("--a", required=True, help="the first option set")
    p.add_argument("--b", required=True, help="the second option set")
    p.add_argument("--time", action="store_true", help="print compile times")
    p.add_argument("sources", nargs="+")
    args = p.parse_args()
    lib = load_nvrtc(args.nvrtc)
    arch = f"--gpu-architecture=sm_{args.arch}"
    differ = False
    for path in args.sources:
        with open(path) as f:
            source = f.read()
        try:
            a, ta = compile_cubin(lib, source, [arch] + args.a.split())
            b, tb = compile_cubin(lib, source, [arch] + args.b.split())
        except RuntimeError as e:
            print(f"{path}: {e}")
            sys.exit(2)
        sa, sb = text_sections(a), text_sections(b)
        changed = sorted(k for k in sa.keys() | sb.keys() if sa.get(k) != sb.get(k))
        verdict = "same" if not changed else "DIFFER: " + ", ".join(changed)
        timing = f"  {ta:.3f} s / {tb:.3f} s" if args.time else ""
        print(f"{path}: {len(sa)} kernels, {verdict}{timing}")
        differ |= bool(changed)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
