//! The instructions around the addresses of interest: ranges of each
//! binary disassembled, each instruction placed under the source lines of
//! its inline chain (pprof's `expandAddresses`, `splitIntoRanges`,
//! `addStack`, `handleUnprocessed` and `initSamples`).

use crate::disasm::{InlineFrame, Instruction};

use super::listing::{canonical_file_name, Counted, InstructionInfo, Printer, SourceInstruction};

/// How far a range reaches beyond the addresses it covers.
const EXPAND: u64 = 500;
/// At most this many ranges are disassembled, the heaviest first.
const MAX_RANGES: usize = 25;
/// An instruction without a line takes the line of one at most this far
/// before it.
const NEIGHBORHOOD: u64 = 32;

/// Addresses of one binary to disassemble together.
struct AddressRange {
    begin: u64,
    end: u64,
    object: String,
    score: i64,
}

impl Printer<'_> {
    /// Disassembles the ranges around the addresses of interest and places
    /// their instructions; addresses without a binary are placed from
    /// their location's lines.
    pub(super) fn expand_addresses(&mut self, counted: &Counted) {
        let (mut ranges, unprocessed) = self.split_into_ranges(counted);
        self.handle_unprocessed(counted, &unprocessed);
        ranges.sort_by(|a, b| b.score.cmp(&a.score).then(a.begin.cmp(&b.begin)));
        ranges.truncate(MAX_RANGES);
        for range in &ranges {
            self.disassemble_range(range);
        }
    }

    /// pprof's `splitIntoRanges`: addresses with a binary, grouped when
    /// within twice [`EXPAND`] of each other and widened by it within
    /// their mapping; and those without one.
    fn split_into_ranges(&self, counted: &Counted) -> (Vec<AddressRange>, Vec<u64>) {
        let mut with_object = Vec::new();
        let mut unprocessed = Vec::new();
        for (&addr, (at, object)) in &counted.addresses {
            match object {
                Some(object) => with_object.push((addr, *at, object)),
                None => unprocessed.push(addr),
            }
        }
        let mut ranges = Vec::new();
        let mut i = 0;
        while i < with_object.len() {
            let (begin, at, object) = with_object[i];
            let (start, limit) = self
                .mapping_of(&self.p.location[at])
                .map_or((0, u64::MAX), |m| (m.memory_start, m.memory_limit));
            let mut end = begin;
            let mut score = flat_at(counted, begin);
            i += 1;
            while let Some(&(next, ..)) = with_object.get(i) {
                if next > end.saturating_add(2 * EXPAND) || next >= limit {
                    break;
                }
                end = next;
                score = score.saturating_add(flat_at(counted, next));
                i += 1;
            }
            // pprof compares `start - begin` here, which wraps: a range
            // near a mapping's start reaches before it and is dropped.
            // The range stops at the mapping's start instead.
            let begin = begin.saturating_sub(EXPAND).max(start.min(begin));
            let end = match limit.saturating_sub(end) >= EXPAND {
                true => end + EXPAND,
                false => limit,
            };
            ranges.push(AddressRange {
                begin,
                end,
                object: object.clone(),
                score,
            });
        }
        (ranges, unprocessed)
    }

    /// Disassembles `range` and places each instruction under the lines of
    /// its inline chain.
    fn disassemble_range(&mut self, range: &AddressRange) {
        let Some(Some(object)) = self.opened.get(&range.object) else {
            return;
        };
        let base = object.base;
        // A range below the binary's base has no file address (pprof
        // reports it and goes on).
        let (Some(begin), Some(end)) = (range.begin.checked_sub(base), range.end.checked_sub(base))
        else {
            return;
        };
        let Ok(instructions) = self.objects.disassemble(object, begin, end) else {
            return;
        };
        let chains: Vec<Vec<InlineFrame>> = (instructions.iter())
            .map(|i| {
                (self.objects.source_lines(object, i.address))
                    .unwrap_or_else(|_| vec![disassembler_frame(i)])
            })
            .collect();
        let mut last: Option<(u64, Vec<InlineFrame>)> = None;
        let mut max_addr = 0;
        for (i, (instruction, mut frames)) in instructions.iter().zip(chains).enumerate() {
            let addr = instruction.address.wrapping_add(base);
            if addr <= max_addr {
                continue;
            }
            max_addr = addr;
            let length = match instructions.get(i + 1) {
                Some(next) if next.address > instruction.address => {
                    next.address - instruction.address
                }
                _ => 1,
            };
            let innermost = frames.first();
            self.instructions.insert(
                addr,
                InstructionInfo {
                    object_address: instruction.address,
                    length,
                    text: instruction.text.clone(),
                    file: innermost.map(|f| f.file.clone()).unwrap_or_default(),
                    line: innermost.map_or(0, |f| f.line),
                    ..InstructionInfo::default()
                },
            );
            // An instruction without a line takes its neighbour's.
            match (frames.first(), &last) {
                (Some(f), _) if f.line != 0 => last = Some((addr, frames.clone())),
                (_, Some((at, near))) if addr - at <= NEIGHBORHOOD => frames = near.clone(),
                _ => {}
            }
            self.add_stack(addr, &frames);
        }
    }

    /// pprof's `addStack`: the instruction at `addr` under each line of
    /// its chain whose function is of interest, with the calls inlined
    /// beneath that line.
    fn add_stack(&mut self, addr: u64, frames: &[InlineFrame]) {
        for (i, frame) in frames.iter().enumerate() {
            if !self.interest.contains(&frame.function) {
                continue;
            }
            let file = self
                .files
                .entry(canonical_file_name(&frame.file))
                .or_default();
            let stack = (frames[..i].iter().rev())
                .map(|callee| (callee.file.clone(), callee.line))
                .collect();
            let shown = file.lines.entry(frame.line).or_default();
            shown.push(SourceInstruction {
                address: addr,
                stack,
            });
            (file.function_of_line)
                .entry(frame.line)
                .or_insert_with(|| frame.function.clone());
        }
    }

    /// pprof's `handleUnprocessed`: addresses without a binary, each an
    /// instruction without text under its location's lines.
    fn handle_unprocessed(&mut self, counted: &Counted, unprocessed: &[u64]) {
        for &addr in unprocessed {
            let at = counted.addresses[&addr].0;
            let location = &self.p.location[at];
            let frames: Vec<InlineFrame> = (location.line.iter())
                .filter_map(|line| {
                    let (name, _, file) = self.function_names(line)?;
                    Some(InlineFrame {
                        function: name.to_string(),
                        file: file.to_string(),
                        line: line.line,
                    })
                })
                .collect();
            let innermost = frames.first();
            self.instructions.insert(
                addr,
                InstructionInfo {
                    object_address: addr,
                    length: 1,
                    file: innermost.map(|f| f.file.clone()).unwrap_or_default(),
                    line: innermost.map_or(0, |f| f.line),
                    ..InstructionInfo::default()
                },
            );
            self.add_stack(addr, &frames);
        }
    }

    /// pprof's `initSamples`: each instruction's values are those of the
    /// addresses it spans (a sample at pc+1 counts for its instruction).
    pub(super) fn init_samples(&mut self, counted: &Counted) {
        for (&addr, instruction) in self.instructions.iter_mut() {
            let span = addr..addr.saturating_add(instruction.length);
            let sum = |values: &std::collections::BTreeMap<u64, i64>| {
                (values.range(span.clone())).fold(0i64, |s, (_, v)| s.saturating_add(*v))
            };
            instruction.flat = sum(&counted.flat);
            instruction.cum = sum(&counted.cum);
        }
    }
}

fn flat_at(counted: &Counted, addr: u64) -> i64 {
    counted.flat.get(&addr).copied().unwrap_or(0)
}

/// The frame the disassembler's own output gives an instruction.
fn disassembler_frame(instruction: &Instruction) -> InlineFrame {
    InlineFrame {
        function: instruction.function.clone(),
        file: instruction.file.clone(),
        line: instruction.line,
    }
}
