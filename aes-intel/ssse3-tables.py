#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
ssse3-tables.py - derive the constants of aes-ssse3.S from the field
arithmetic, check the round structure the assembly uses against FIPS-197
for every byte and for whole blocks, and print the tables as assembly.

    python3 aes-intel/ssse3-tables.py          check, then print the tables
    python3 aes-intel/ssse3-tables.py --check  check only

The S-box inversion (Hamburg, "Accelerating AES with vector permute
instructions", CHES 2009): GF(2^8) as GF(16)[t]/(t^2 + t + z), an element
x = (i/z) t + k kept as the two nibbles i (high) and k (low) of a byte.
With a = 1/z, j = i + k and N = k^2 + a i k + a i^2 (N = the norm of x):

    1/x = (i/N) * (t/z) + (k + a i)/N
    io  = 1/(1/i + a/k) + j = N/(k + a i)
    jo  = 1/(1/j + a/k) + i = N/(k + a j)

so u = 1/io = (k + a i)/N is the low coordinate of 1/x, and with
v = 1/jo the high one is i/N = (z + z^2) u + z^2 v.  Every step is a
function of one nibble (a 16-entry pshufb table) or an XOR.  Division by
zero: the tables give 0x80 for 1/0 and a/0, and pshufb gives 0 for an
index with bit 7 set, which makes every case with a zero nibble (and x = 0,
whose "inverse" AES defines as 0) come out right; checked below for all 256
bytes.  The output tables map (io, jo) to any GF(2)-linear image of 1/x:
the S-box's linear part, times a MixColumns coefficient, in the basis the
next round works in; the affine constant 0x63 goes into the round keys.
"""
import sys

# ---- GF(2^8), the AES field: x^8 + x^4 + x^3 + x + 1 ----


def gmul(a, b, poly=0x11b, bits=8):
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if a >> bits:
            a ^= poly
    return r


def ginv(a):
    return 0 if a == 0 else next(b for b in range(1, 256) if gmul(a, b) == 1)


def rotl8(x, n):
    return ((x << n) | (x >> (8 - n))) & 0xff


def aff_lin(x):
    """The linear part of the S-box's affine map (FIPS-197 5.1.1)."""
    return x ^ rotl8(x, 1) ^ rotl8(x, 2) ^ rotl8(x, 3) ^ rotl8(x, 4)


SBOX = [aff_lin(ginv(x)) ^ 0x63 for x in range(256)]
AFF_INV = {aff_lin(x): x for x in range(256)}	# the inverse of aff_lin
INV_SBOX = [0] * 256
for x in range(256):
    INV_SBOX[SBOX[x]] = x

# ---- GF(16) = GF(2)[y]/(y^4 + y + 1), and the tower over it ----


def m16(a, b):
    return gmul(a, b, 0x13, 4)


def i16(a):
    return 0 if a == 0 else next(b for b in range(1, 16) if m16(a, b) == 1)


# z: t^2 + t + z has no root in GF(16); the smallest such z.
Z = next(z for z in range(2, 16)
         if all(m16(u, u) ^ u != z for u in range(16)))
A = i16(Z)


def tmul(x, y):
    """Tower product; an element is (h, l) = h t + l, t^2 = t + z."""
    (h1, l1), (h2, l2) = x, y
    hh = m16(h1, h2)
    return (hh ^ m16(h1, l2) ^ m16(l1, h2), m16(hh, Z) ^ m16(l1, l2))


def tadd(x, y):
    return (x[0] ^ y[0], x[1] ^ y[1])


# phi: GF(2^8) -> tower, the isomorphism sending the AES generator x to a
# root b of x^8 + x^4 + x^3 + x + 1 in the tower.
def tpow(x, n):
    r = (0, 1)
    for _ in range(n):
        r = tmul(r, x)
    return r


def is_root(b):
    acc = (0, 0)
    for n in (8, 4, 3, 1, 0):
        acc = tadd(acc, tpow(b, n))
    return acc == (0, 0)


ROOT = next((h, l) for h in range(16) for l in range(16)
            if (h, l) != (0, 0) and is_root((h, l)))
POW = [tpow(ROOT, n) for n in range(8)]


def phi_elem(x):
    r = (0, 0)
    for n in range(8):
        if x >> n & 1:
            r = tadd(r, POW[n])
    return r


def elem_to_coords(e):
    """(h, l) = (i/z) t + k -> the byte i << 4 | k."""
    h, l = e
    return m16(h, Z) << 4 | l


def coords_to_elem(c):
    return (m16(c >> 4, A), c & 15)


PHI = [elem_to_coords(phi_elem(x)) for x in range(256)]
PHI_INV = [0] * 256
for x in range(256):
    PHI_INV[PHI[x]] = x
assert sorted(PHI) == list(range(256))
for x in range(256):
    for y in range(256):
        assert PHI[x ^ y] == PHI[x] ^ PHI[y]
assert all(PHI[gmul(x, y)] == elem_to_coords(tmul(phi_elem(x), phi_elem(y)))
           for x in range(256) for y in (2, 3, 0x53, 0xca))

# ---- pshufb and the nibble tables ----


def pshufb1(table, idx):
    return 0 if idx & 0x80 else table[idx & 15]


INV = [0x80] + [i16(x) for x in range(1, 16)]
AINV = [0x80] + [m16(A, i16(x)) for x in range(1, 16)]


def inversion(c):
    """The pshufb steps on one byte of coordinates: (io, jo)."""
    k = c & 15
    i = c >> 4
    ak = pshufb1(AINV, k)
    j = i ^ k
    iak = pshufb1(INV, i) ^ ak
    jak = pshufb1(INV, j) ^ ak
    io = pshufb1(INV, iak) ^ j
    jo = pshufb1(INV, jak) ^ i
    return io, jo


def out_tables(lin):
    """F, G with F[io] ^ G[jo] = lin(1/x) for lin GF(2)-linear on bytes."""
    zz = m16(Z, Z)
    f = [0] * 16
    g = [0] * 16
    for w in range(1, 16):
        u = i16(w)
        # the part of 1/x that u gives: low u, high (z + z^2) u
        f[w] = lin(PHI_INV[m16(u, Z ^ zz) << 4 | u])
        g[w] = lin(PHI_INV[m16(u, zz) << 4])
    return f, g


def lookup(fg, io, jo):
    return pshufb1(fg[0], io) ^ pshufb1(fg[1], jo)


def split_linear(fn):
    """lo, hi with lo[x & 15] ^ hi[x >> 4] = fn(x), fn affine."""
    c = fn(0)
    lo = [fn(x) for x in range(16)]
    hi = [fn(x << 4) ^ c for x in range(16)]
    for x in range(256):
        assert lo[x & 15] ^ hi[x >> 4] == fn(x)
    return lo, hi


def ident(x):
    return x


# Encryption: the state between rounds in coordinates (PHI of the AES state).
ENC_IN = split_linear(lambda x: PHI[x])
ENC_S1 = out_tables(lambda x: PHI[aff_lin(x)])		# S(x) - 0x63
ENC_S2 = out_tables(lambda x: PHI[gmul(2, aff_lin(x))])	# 2 (S(x) - 0x63)
ENC_LAST = out_tables(aff_lin)				# standard basis

# Decryption: the state is DPSI(s) = PHI(aff_lin^-1(s) + 0x05), the
# coordinates of the InvSubBytes input (aff_lin^-1(0x63) = 0x05).
C05 = AFF_INV[0x63]
assert C05 == 0x05
DEC_IN = split_linear(lambda x: PHI[AFF_INV[x] ^ C05])


def dec_out(c):
    return out_tables(lambda x: PHI[AFF_INV[gmul(c, x)]])


DEC_9 = dec_out(9)
DEC_D = dec_out(0xd)
DEC_B = dec_out(0xb)
DEC_E = dec_out(0xe)
DEC_LAST = out_tables(ident)

# every byte: the S-box, and what the rounds rely on
for x in range(256):
    c = PHI[x]
    io, jo = inversion(c)
    assert lookup(ENC_S1, io, jo) == PHI[SBOX[x] ^ 0x63], x
    assert lookup(ENC_S2, io, jo) == PHI[gmul(2, SBOX[x] ^ 0x63)], x
    assert lookup(ENC_LAST, io, jo) ^ 0x63 == SBOX[x], x
    d = DEC_IN[0][x & 15] ^ DEC_IN[1][x >> 4]
    io, jo = inversion(d)
    assert lookup(DEC_LAST, io, jo) == INV_SBOX[x], x
    for cc, fg in ((9, DEC_9), (0xd, DEC_D), (0xb, DEC_B), (0xe, DEC_E)):
        # the next round's DPSI, less its constant: that is in the key
        assert (lookup(fg, io, jo) ==
                PHI[AFF_INV[gmul(cc, INV_SBOX[x])]]), (x, cc)

# ---- byte permutations (pshufb masks: out[n] = in[m[n]]) ----
# AES state byte n = 4 c + r (column c, row r), as in memory.
SR = [4 * ((n // 4 + n % 4) % 4) + n % 4 for n in range(16)]
ISR = [4 * ((n // 4 - n % 4) % 4) + n % 4 for n in range(16)]
ROT1 = [4 * (n // 4) + (n % 4 + 1) % 4 for n in range(16)]
ROT3 = [4 * (n // 4) + (n % 4 + 3) % 4 for n in range(16)]


def shuf(v, m):
    return [v[x] for x in m]


def xor(a, b):
    return [x ^ y for x, y in zip(a, b)]


def nib(v, t):
    return [t[0][x & 15] ^ t[1][x >> 4] for x in v]


def sbox_out(v, fg):
    return [lookup(fg, *inversion(x)) for x in v]


def rk_coords(rk, const):
    return [PHI[b ^ const] for b in rk]


def enc_block(rks, p):
    """The assembly's encryption; rks: FIPS-197 round keys, 16 bytes each."""
    nr = len(rks) - 1
    y = nib(xor(p, rks[0]), ENC_IN)
    for r in range(1, nr):
        y = shuf(y, SR)
        a1 = sbox_out(y, ENC_S1)
        a2 = sbox_out(y, ENC_S2)
        x = xor(a2, shuf(a1, ROT1))
        y = xor(xor(x, shuf(x, ROT1)), shuf(a1, ROT3))
        y = xor(y, rk_coords(rks[r], 0x63))
    y = shuf(y, SR)
    return xor(sbox_out(y, ENC_LAST), [b ^ 0x63 for b in rks[nr]])


def dec_block(dks, c):
    """The assembly's decryption; dks: equivalent inverse cipher keys."""
    nr = len(dks) - 1
    y = nib(xor(c, dks[0]), DEC_IN)
    for r in range(1, nr):
        y = shuf(y, ISR)
        z = sbox_out(y, DEC_9)
        z = xor(shuf(z, ROT1), sbox_out(y, DEC_D))
        z = xor(shuf(z, ROT1), sbox_out(y, DEC_B))
        z = xor(shuf(z, ROT1), sbox_out(y, DEC_E))
        y = xor(z, nib(dks[r], DEC_IN))
    y = shuf(y, ISR)
    return xor(sbox_out(y, DEC_LAST), dks[nr])


def key_expand(key):
    nk = len(key) // 4
    nr = nk + 6
    w = [list(key[4 * i:4 * i + 4]) for i in range(nk)]
    rcon = 1
    for i in range(nk, 4 * (nr + 1)):
        t = list(w[i - 1])
        if i % nk == 0:
            t = [SBOX[b] for b in t[1:] + t[:1]]
            t[0] ^= rcon
            rcon = gmul(rcon, 2)
        elif nk > 6 and i % nk == 4:
            t = [SBOX[b] for b in t]
        w.append([a ^ b for a, b in zip(w[i - nk], t)])
    return [sum(w[4 * r:4 * r + 4], []) for r in range(nr + 1)]


def inv_mix(col16):
    out = []
    for c in range(4):
        a = col16[4 * c:4 * c + 4]
        for r in range(4):
            out.append(gmul(14, a[r]) ^ gmul(11, a[(r + 1) % 4]) ^
                       gmul(13, a[(r + 2) % 4]) ^ gmul(9, a[(r + 3) % 4]))
    return out


def check_blocks():
    # FIPS-197 appendix C
    pt = bytes.fromhex("00112233445566778899aabbccddeeff")
    want = {16: "69c4e0d86a7b0430d8cdb78070b4c55a",
            24: "dda97ca4864cdfe06eaf70a0ec0d7191",
            32: "8ea2b7ca516745bfeafc49904b496089"}
    for kl, ct in want.items():
        rks = key_expand(bytes(range(kl)))
        nr = len(rks) - 1
        dks = [rks[nr]] + [inv_mix(rks[r]) for r in range(nr - 1, 0, -1)] \
            + [rks[0]]
        assert bytes(enc_block(rks, list(pt))).hex() == ct, kl
        assert bytes(dec_block(dks, list(bytes.fromhex(ct)))) == pt, kl


check_blocks()

# ---- output ----


def emit():
    print("/* Generated by ssse3-tables.py: z = %#x, a = 1/z = %#x, GF(16) mod"
          " y^4 + y + 1. */" % (Z, A))
    rows = [
        ("s0f", [0x0f] * 16, "the low nibble of each byte"),
        ("inv", INV, "1/x in GF(16), 1/0 = 0x80"),
        ("ainv", AINV, "a/x, a/0 = 0x80"),
        ("enc_in_lo", ENC_IN[0], "AES byte -> coordinates, low nibble"),
        ("enc_in_hi", ENC_IN[1], "... high nibble"),
        ("enc_s1_f", ENC_S1[0], "S(x) - 0x63 in coordinates, from io"),
        ("enc_s1_g", ENC_S1[1], "... from jo"),
        ("enc_s2_f", ENC_S2[0], "2 (S(x) - 0x63) in coordinates, from io"),
        ("enc_s2_g", ENC_S2[1], "... from jo"),
        ("enc_last_f", ENC_LAST[0], "S(x) - 0x63, AES basis, from io"),
        ("enc_last_g", ENC_LAST[1], "... from jo"),
        ("dec_in_lo", DEC_IN[0], "AES byte -> InvSubBytes input coordinates"),
        ("dec_in_hi", DEC_IN[1], "... high nibble"),
        ("dec_9_f", DEC_9[0], "9 InvS(x), as the next round's input"),
        ("dec_9_g", DEC_9[1], ""),
        ("dec_d_f", DEC_D[0], "13 InvS(x)"),
        ("dec_d_g", DEC_D[1], ""),
        ("dec_b_f", DEC_B[0], "11 InvS(x)"),
        ("dec_b_g", DEC_B[1], ""),
        ("dec_e_f", DEC_E[0], "14 InvS(x)"),
        ("dec_e_g", DEC_E[1], ""),
        ("dec_last_f", DEC_LAST[0], "InvS(x), AES basis"),
        ("dec_last_g", DEC_LAST[1], ""),
        ("sr", SR, "ShiftRows"),
        ("isr", ISR, "InvShiftRows"),
        ("rot1", ROT1, "each column's bytes down by one: out[r] = in[r + 1]"),
        ("rot3", ROT3, "out[r] = in[r + 3]"),
        ("s63", [0x63] * 16, "the S-box's constant"),
    ]
    for name, t, what in rows:
        print(".Lk_%s:%s" % (name, "\t/* %s */" % what if what else ""))
        for h in (0, 8):
            print("\t.byte\t" + ", ".join("0x%02x" % b for b in t[h:h + 8]))


if __name__ == "__main__":
    if sys.argv[1:] != ["--check"]:
        emit()
    print("ssse3-tables.py: all checks passed", file=sys.stderr)
