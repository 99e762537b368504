//! A systematic Reed-Solomon erasure code over GF(2^8) with a Cauchy parity matrix.
//!
//! Parity shard `r` (0..h) is `sum_c C[r][c] * data_c` with `C[r][c] = 1 / (x_r + y_c)`,
//! `x_r = 128 + r` and `y_c = c`: every square submatrix of a Cauchy matrix is invertible, so any
//! `k` of the `k + h` shards give back the `k` data shards (an MDS code), for `k, h <= 127`. The
//! coefficients do not depend on `k`, so a block closed early (RSE/Ad) uses the same rows.
//!
//! Why written here and not taken from a crate (the guide's rule): `reed-solomon-simd` (GF(2^16),
//! FFT) decodes in ~300 us per block whatever the block's size, 90 % of a 20:10 test's time, and
//! `reed-solomon-erasure` brings `lru` -> `hashbrown` -> `ahash` -> `getrandom`/`libc` into
//! msll-proto, which the tunnel's `tun-rs` also builds as a C library: a workspace build would then
//! compile the simulator's crates under other hashes and lose the PGO profile
//! (`crates/msll-lab/tests/pgo_crate_hashes.rs`, issue 8). The code is ~150 lines of textbook
//! arithmetic (Plank, "A tutorial on Reed-Solomon coding for fault-tolerance in RAID-like
//! systems", 1997, and its 2003 correction; Blomer et al., "An XOR-based erasure-resilient coding
//! scheme", 1995, for the Cauchy matrix), checked below against every erasure pattern of small
//! codes.

/// GF(2^8) with the polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d), generator 2.
struct Gf {
    exp: [u8; 512],
    log: [u8; 256],
}

const GF: Gf = {
    let mut exp = [0u8; 512];
    let mut log = [0u8; 256];
    let mut x: u16 = 1;
    let mut i = 0;
    while i < 255 {
        exp[i] = x as u8;
        exp[i + 255] = x as u8;
        log[x as usize] = i as u8;
        x <<= 1;
        if x & 0x100 != 0 {
            x ^= 0x11d;
        }
        i += 1;
    }
    Gf { exp, log }
};

fn mul(a: u8, b: u8) -> u8 {
    if a == 0 || b == 0 {
        0
    } else {
        GF.exp[GF.log[a as usize] as usize + GF.log[b as usize] as usize]
    }
}

fn inv(a: u8) -> u8 {
    debug_assert!(a != 0);
    GF.exp[255 - GF.log[a as usize] as usize]
}

/// The parity matrix's entry for parity row `r` and data column `c`.
fn coef(r: usize, c: usize) -> u8 {
    debug_assert!(r < 128 && c < 128);
    inv((128 + r as u8) ^ c as u8)
}

/// `dst += f * src`, byte by byte (addition is XOR).
fn mul_add(dst: &mut [u8], f: u8, src: &[u8]) {
    match f {
        0 => {}
        1 => dst.iter_mut().zip(src).for_each(|(d, s)| *d ^= s),
        _ => {
            // One lookup per byte in f's own product table (256 entries, built per call: a
            // shard is hundreds of bytes), instead of two log lookups, a branch and an exp
            // lookup per byte (`mslld bench`, RSE 20:10 goodput 0.30 -> 0.38 Gbit/s).
            let lf = GF.log[f as usize] as usize;
            let mut t = [0u8; 256];
            for (s, v) in t.iter_mut().enumerate().skip(1) {
                *v = GF.exp[lf + GF.log[s] as usize];
            }
            for (d, &s) in dst.iter_mut().zip(src) {
                *d ^= t[s as usize];
            }
        }
    }
}

/// Largest number of data or parity shards.
pub const MAX_SHARDS: usize = 127;

/// Fill `parity` (each as long as the data shards, contents overwritten) from `data`.
///
/// # Panics
/// With more than [`MAX_SHARDS`] data or parity shards, or shards of unequal length.
pub fn encode<D: AsRef<[u8]>>(data: &[D], parity: &mut [Vec<u8>]) {
    assert!(data.len() <= MAX_SHARDS && parity.len() <= MAX_SHARDS);
    for (r, p) in parity.iter_mut().enumerate() {
        p.iter_mut().for_each(|b| *b = 0);
        for (c, d) in data.iter().enumerate() {
            let d = d.as_ref();
            assert_eq!(d.len(), p.len(), "shards of one block have one length");
            mul_add(p, coef(r, c), d);
        }
    }
}

/// Rebuild the data shards that are `None` in `data` from the others and the parity shards
/// `parity` (`(row, shard)`, rows distinct and below [`MAX_SHARDS`]), all `size` bytes long.
/// Returns false, changing nothing, when fewer parity shards than missing data shards are given
/// or the lengths disagree.
pub fn reconstruct(data: &mut [Option<Vec<u8>>], parity: &[(usize, &[u8])], size: usize) -> bool {
    let missing: Vec<usize> = (0..data.len()).filter(|&c| data[c].is_none()).collect();
    let m = missing.len();
    if m == 0 {
        return true;
    }
    if parity.len() < m
        || data.len() > MAX_SHARDS
        || data.iter().flatten().any(|d| d.len() != size)
        || parity
            .iter()
            .any(|(r, p)| *r >= MAX_SHARDS || p.len() != size)
    {
        return false;
    }
    let rows = &parity[..m];
    // Syndromes: each parity row minus what the received data shards contribute to it, which
    // leaves sum_j C[r][missing_j] * x_j.
    let mut syn: Vec<Vec<u8>> = rows
        .iter()
        .map(|&(r, p)| {
            let mut s = p.to_vec();
            for (c, d) in data.iter().enumerate() {
                if let Some(d) = d {
                    mul_add(&mut s, coef(r, c), d);
                }
            }
            s
        })
        .collect();
    // Solve A x = syn with A[i][j] = C[row_i][missing_j] (a Cauchy submatrix: invertible) by
    // Gauss-Jordan elimination, applying each row operation to the syndrome shards.
    let mut a: Vec<Vec<u8>> = rows
        .iter()
        .map(|&(r, _)| missing.iter().map(|&c| coef(r, c)).collect())
        .collect();
    for col in 0..m {
        let Some(piv) = (col..m).find(|&i| a[i][col] != 0) else {
            return false; // singular: impossible for distinct rows of a Cauchy matrix
        };
        a.swap(col, piv);
        syn.swap(col, piv);
        let f = inv(a[col][col]);
        for v in a[col].iter_mut() {
            *v = mul(*v, f);
        }
        let pivot_syn = std::mem::take(&mut syn[col]);
        let mut scaled = vec![0u8; size];
        mul_add(&mut scaled, f, &pivot_syn);
        let pivot_row = a[col].clone();
        for i in 0..m {
            if i != col && a[i][col] != 0 {
                let g = a[i][col];
                for (v, p) in a[i].iter_mut().zip(&pivot_row) {
                    *v ^= mul(g, *p);
                }
                mul_add(&mut syn[i], g, &scaled);
            }
        }
        syn[col] = scaled;
    }
    for (j, &c) in missing.iter().enumerate() {
        data[c] = Some(std::mem::take(&mut syn[j]));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_arithmetic_is_a_field() {
        for a in 1..=255u8 {
            assert_eq!(mul(a, inv(a)), 1, "{a}");
            assert_eq!(mul(a, 1), a);
        }
        // 0x11d: x^8 = x^4 + x^3 + x^2 + 1
        assert_eq!(mul(0x80, 2), 0x1d);
    }

    fn shards(k: usize, size: usize, seed: u8) -> Vec<Vec<u8>> {
        (0..k)
            .map(|c| {
                (0..size)
                    .map(|i| (c as u8).wrapping_mul(31) ^ (i as u8).wrapping_mul(seed) ^ seed)
                    .collect()
            })
            .collect()
    }

    /// Every erasure pattern of up to h shards among k + h, for small codes: data back exactly.
    #[test]
    fn every_pattern_of_up_to_h_erasures_is_recovered() {
        for k in 1..=6usize {
            for h in 1..=3usize {
                let size = 5;
                let data = shards(k, size, 7 + k as u8);
                let mut parity = vec![vec![0u8; size]; h];
                encode(&data, &mut parity);
                for mask in 0u32..1 << (k + h) {
                    let erased = mask.count_ones() as usize;
                    let mut d: Vec<Option<Vec<u8>>> = (0..k)
                        .map(|c| (mask >> c & 1 == 0).then(|| data[c].clone()))
                        .collect();
                    let p: Vec<(usize, &[u8])> = (0..h)
                        .filter(|r| mask >> (k + r) & 1 == 0)
                        .map(|r| (r, parity[r].as_slice()))
                        .collect();
                    let ok = reconstruct(&mut d, &p, size);
                    let data_lost = (0..k).filter(|c| mask >> c & 1 != 0).count();
                    assert_eq!(
                        ok,
                        erased <= h || data_lost == 0,
                        "k {k} h {h} mask {mask:b}"
                    );
                    if ok {
                        let got: Vec<Vec<u8>> = d.into_iter().map(Option::unwrap).collect();
                        assert_eq!(got, data, "k {k} h {h} mask {mask:b}");
                    }
                }
            }
        }
    }

    /// The largest shape: 127 + 127, the first 127 shards lost.
    #[test]
    fn the_largest_block_recovers_from_parity_alone() {
        let size = 3;
        let data = shards(127, size, 3);
        let mut parity = vec![vec![0u8; size]; 127];
        encode(&data, &mut parity);
        let mut d: Vec<Option<Vec<u8>>> = vec![None; 127];
        let p: Vec<(usize, &[u8])> = parity.iter().map(|s| s.as_slice()).enumerate().collect();
        assert!(reconstruct(&mut d, &p, size));
        assert_eq!(d.into_iter().map(Option::unwrap).collect::<Vec<_>>(), data);
    }

    #[test]
    fn one_parity_row_is_not_plain_xor_but_still_recovers_one_loss() {
        let data = shards(4, 4, 9);
        let mut parity = vec![vec![0u8; 4]; 1];
        encode(&data, &mut parity);
        let mut d: Vec<Option<Vec<u8>>> = data.iter().cloned().map(Some).collect();
        d[2] = None;
        assert!(reconstruct(&mut d, &[(0, &parity[0])], 4));
        assert_eq!(d[2].as_deref(), Some(&data[2][..]));
        let mut d2 = d.clone();
        d2[0] = None;
        d2[1] = None;
        assert!(
            !reconstruct(&mut d2, &[(0, &parity[0])], 4),
            "two losses, one row"
        );
    }
}
