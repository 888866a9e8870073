"""Sizes as the generators take them: 200M, 1G, 64KiB, 1.5GB or a number of bytes."""


def parse_size(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper().removesuffix("IB").removesuffix("B")
    if s and s[-1] in units:
        return int(float(s[:-1]) * units[s[-1]])
    return int(s)
