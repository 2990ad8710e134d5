//! The listing from the placed instructions: files in name order, each
//! split into per-function ranges of lines, each line with its
//! instructions (pprof's `generate`, `generateFile`, `functions`,
//! `makeWebListLine` and `makeWebListInstructions`).

use crate::go_path::base;
use crate::report::{percentage, TopReport};

use super::listing::{
    indentation, right_pad, Printer, SourceFile, SourceFunction, SourceInstruction, WebList,
    WebListCall, WebListFunction, WebListInstruction, WebListLine,
};
use super::page::html_escape_string;

/// Lines of one function this close are shown as one range.
const MERGE_LIMIT: i64 = 20;
/// How many lines a range is widened by, for context.
const CONTEXT: i64 = 5;

/// An instruction as a line shows it (pprof's `assemblyInstruction`).
struct Assembly {
    address: u64,
    text: String,
    file: String,
    line: i64,
    flat: i64,
    cum: i64,
    starts_block: bool,
    inlined_calls: Vec<(String, i64)>,
}

impl Printer<'_> {
    /// The listing: each file's totals, then its functions.
    /// (pprof sums each file's values to order files by them when it
    /// shows only some; every file is shown here, in name order.)
    pub(super) fn generate(&mut self, report: &TopReport) -> WebList {
        let mut listing = WebList {
            total: report.format_value(report.total),
            functions: Vec::new(),
        };
        let files = std::mem::take(&mut self.files);
        for (name, file) in &files {
            self.generate_file(name, file, report, &mut listing.functions);
        }
        listing
    }

    fn generate_file(
        &mut self,
        name: &str,
        file: &SourceFile,
        report: &TopReport,
        out: &mut Vec<WebListFunction>,
    ) {
        for function in self.functions(file) {
            if function.cum == 0 {
                continue;
            }
            let mut shown = WebListFunction {
                name: function.name.clone(),
                file: name.to_string(),
                flat: report.format_value(function.flat),
                cum: report.format_value(function.cum),
                percent: percentage(function.cum, report.total),
                lines: Vec::new(),
            };
            for number in function.begin..function.end {
                let placed = file.lines.get(&number).map_or(&[][..], Vec::as_slice);
                let text = match self.sources.line(name, number) {
                    Some(text) => text,
                    None if placed.is_empty() => continue,
                    None if number == 0 => "<instructions with unknown line numbers>".into(),
                    None => "???".into(),
                };
                let assembly = self.assembly(placed);
                shown
                    .lines
                    .push(self.web_list_line(number, text, assembly, report));
            }
            out.push(shown);
        }
    }

    /// The instructions placed under a line, as it shows them.
    fn assembly(&self, placed: &[SourceInstruction]) -> Vec<Assembly> {
        let mut last = 0u64;
        (placed.iter())
            .map(|shown| {
                let x = &self.instructions[&shown.address];
                let last_length = self.instructions.get(&last).map_or(0, |i| i.length);
                let starts_block = shown.address != last.wrapping_add(last_length);
                last = shown.address;
                Assembly {
                    address: x.object_address,
                    text: x.text.clone(),
                    file: x.file.clone(),
                    line: x.line,
                    flat: x.flat,
                    cum: x.cum,
                    starts_block,
                    inlined_calls: shown.stack.clone(),
                }
            })
            .collect()
    }

    /// pprof's `functions`: a file's lines in ranges, one function each;
    /// lines of the same function fewer than [`MERGE_LIMIT`] apart share a
    /// range, and ranges are widened by [`CONTEXT`] lines.
    fn functions(&self, file: &SourceFile) -> Vec<SourceFunction> {
        let mut functions: Vec<SourceFunction> = Vec::new();
        for (&line, placed) in &file.lines {
            let name = file
                .function_of_line
                .get(&line)
                .cloned()
                .unwrap_or_default();
            let name = self.pretty_name(&name);
            let mut function = SourceFunction {
                name,
                begin: line,
                end: line + 1,
                flat: 0,
                cum: 0,
            };
            for shown in placed {
                let i = &self.instructions[&shown.address];
                function.flat = function.flat.saturating_add(i.flat);
                function.cum = function.cum.saturating_add(i.cum);
            }
            match functions.last_mut() {
                Some(last) if line - last.end < MERGE_LIMIT && last.name == function.name => {
                    last.end = line + 1;
                    last.flat = last.flat.saturating_add(function.flat);
                    last.cum = last.cum.saturating_add(function.cum);
                }
                _ => functions.push(function),
            }
        }
        widen(&mut functions);
        functions
    }

    /// pprof's `makeWebListLine`.
    fn web_list_line(
        &mut self,
        number: i64,
        source: String,
        assembly: Vec<Assembly>,
        report: &TopReport,
    ) -> WebListLine {
        let flat = assembly.iter().fold(0i64, |s, a| s.saturating_add(a.flat));
        let cum = assembly.iter().fold(0i64, |s, a| s.saturating_add(a.cum));
        let nested = (assembly.iter()).any(|a| !a.inlined_calls.is_empty() || !a.text.is_empty());
        let class = match (assembly.is_empty(), nested) {
            (true, _) => "nop",
            (false, false) => "deadsrc",
            (false, true) => "livesrc",
        };
        let instructions = match nested {
            true => self.instructions_of(indentation(&source), &assembly, report),
            false => Vec::new(),
        };
        WebListLine {
            number,
            class,
            flat: value_or_dot(flat, report),
            cum: value_or_dot(cum, report),
            source,
            instructions,
        }
    }

    /// pprof's `makeWebListInstructions`: each instruction indented under
    /// its line (deeper for each inlined call), with the calls that lead
    /// to it and were not shown for the instruction before.
    fn instructions_of(
        &mut self,
        indent: usize,
        assembly: &[Assembly],
        report: &TopReport,
    ) -> Vec<WebListInstruction> {
        let mut current: &[(String, i64)] = &[];
        let mut out = Vec::with_capacity(assembly.len());
        for (i, a) in assembly.iter().enumerate() {
            let file_line = match a.file.is_empty() {
                true => String::new(),
                false => format!("{}:{}", html_escape_string(base(&a.file)), a.line),
            };
            let depth = indent + 4 + 4 * a.inlined_calls.len();
            let mut instruction = WebListInstruction {
                new_block: a.starts_block && i != 0,
                flat: value_or_dot(a.flat, report),
                cum: value_or_dot(a.cum, report),
                synthetic: a.text.is_empty(),
                address: a.address,
                text: right_pad(&format!("{}{}", " ".repeat(depth), a.text), 80),
                file_line,
                inlined_calls: Vec::new(),
            };
            let mut same = true;
            for (j, (file, line)) in a.inlined_calls.iter().enumerate() {
                if same && current.get(j) == Some(&(file.clone(), *line)) {
                    continue;
                }
                same = false;
                let text = self.sources.line(file, *line).unwrap_or_default();
                let code = format!("{}{}", " ".repeat(indent + 4 + 4 * j), text.trim());
                instruction.inlined_calls.push(WebListCall {
                    source: right_pad(&code, 80),
                    file_base: base(file).to_string(),
                    line: *line,
                });
            }
            current = &a.inlined_calls;
            out.push(instruction);
        }
        out
    }
}

/// Widens each range: the first back by [`CONTEXT`] lines (not below line
/// 1, and line 0 stays), each gap shared between its neighbours up to
/// [`CONTEXT`] each, the last forward by [`CONTEXT`].
fn widen(functions: &mut [SourceFunction]) {
    for i in 0..functions.len() {
        if i == 0 {
            let f = &mut functions[0];
            if f.begin > CONTEXT {
                f.begin -= CONTEXT;
            } else if f.begin > 1 {
                f.begin = 1;
            }
        } else {
            let half_gap = ((functions[i].begin - functions[i - 1].end) / 2).min(CONTEXT);
            functions[i - 1].end += half_gap;
            functions[i].begin -= half_gap;
        }
    }
    if let Some(last) = functions.last_mut() {
        last.end += CONTEXT;
    }
}

fn value_or_dot(value: i64, report: &TopReport) -> String {
    match value {
        0 => ".".into(),
        v => report.format_value(v),
    }
}
