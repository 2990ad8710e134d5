//! Mutations that favour the places protobuf decoders go wrong: varint and
//! wire-type boundaries, lengths that no longer fit, cut and repeated ranges.

pub use protoprof_synth::Rng;

/// Values that sit on varint and wire-type boundaries.
const INTERESTING: [u8; 10] = [0x00, 0x01, 0x02, 0x07, 0x08, 0x0f, 0x7f, 0x80, 0xfe, 0xff];

/// One to four random edits of `seed`: bit flips, boundary bytes, inserted,
/// removed or repeated ranges, truncation.
pub fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        edit(&mut out, rng);
    }
    out
}

/// `mutate`, or now and then a splice of the front of `seed` with the back
/// of `other` (two corpus entries that each reach something).
pub fn mutate_with(seed: &[u8], other: &[u8], rng: &mut Rng) -> Vec<u8> {
    if rng.below(8) != 0 || seed.is_empty() || other.is_empty() {
        return mutate(seed, rng);
    }
    let mut out = seed[..rng.below(seed.len())].to_vec();
    out.extend_from_slice(&other[rng.below(other.len())..]);
    out
}

fn edit(out: &mut Vec<u8>, rng: &mut Rng) {
    let len = out.len();
    match rng.below(7) {
        0 if len > 0 => {
            let i = rng.below(len);
            out[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            out[i] = INTERESTING[rng.below(INTERESTING.len())];
        }
        2 => {
            let i = rng.below(len + 1);
            let bytes: Vec<u8> = (0..1 + rng.below(8))
                .map(|_| INTERESTING[rng.below(INTERESTING.len())])
                .collect();
            out.splice(i..i, bytes);
        }
        3 if len > 1 => {
            let i = rng.below(len);
            let n = 1 + rng.below((len - i).min(16));
            out.drain(i..i + n);
        }
        4 if len > 1 => {
            let i = rng.below(len);
            let n = 1 + rng.below((len - i).min(64));
            let copy = out[i..i + n].to_vec();
            let at = rng.below(len + 1);
            out.splice(at..at, copy);
        }
        5 if len > 0 => out.truncate(rng.below(len)),
        _ => {
            let i = rng.below(len + 1);
            out.insert(i, rng.next_u64() as u8);
        }
    }
}
