//! The function table as text: `scorch top` (as `pprof -top` prints it) and the table
//! view's "copy as TSV". One line per
//! function with self and total (recursion counted once) in the file's units, exactly,
//! and their shares of the whole; a diff gets before, after and the change of each side's
//! share. Ties keep one order on every run (by name).

use crate::color::{diff_shares, relative_change};
use crate::model::functions::{FunctionStats, SortKey, function_table, sort_functions};
use crate::model::units::Unit;
use crate::model::{Names, Profile, ValueFormat};
use std::fmt::{self, Display, Write as _};

/// How `scorch top` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopFormat {
    /// Aligned columns with a header, for reading.
    Text,
    /// Tab-separated, a header line first; tabs and line ends in names escaped.
    Tsv,
    /// RFC 4180 comma-separated, a header line first.
    Csv,
}

/// The table `scorch top` prints.
pub struct Top<'a> {
    names: &'a Names,
    values: &'a ValueFormat,
    rows: Vec<FunctionStats>,
    total: u64,
    diff_ticks: Option<(u64, u64)>,
    format: TopFormat,
}

impl<'a> Top<'a> {
    /// The functions of `p` sorted by `sort` (largest first; names ascending) and cut to
    /// the first `limit`. `sort` defaults to self, or to the change for a diff.
    pub fn of(
        p: &'a Profile,
        sort: Option<SortKey>,
        limit: Option<usize>,
        format: TopFormat,
    ) -> Top<'a> {
        let diff_ticks = p.diff_ticks();
        let mut rows = function_table(&p.tree);
        let key = sort.unwrap_or(if diff_ticks.is_some() {
            SortKey::Change
        } else {
            SortKey::SelfTicks
        });
        sort_functions(&mut rows, &p.names, key, key != SortKey::Name, diff_ticks);
        if let Some(n) = limit {
            rows.truncate(n);
        }
        Top::of_rows(p, rows, format)
    }

    /// `rows` of `p`'s function table, in their order.
    pub fn of_rows(p: &'a Profile, rows: Vec<FunctionStats>, format: TopFormat) -> Top<'a> {
        Top {
            names: &p.names,
            values: &p.values,
            rows,
            total: p.tree.grand_total(),
            diff_ticks: p.diff_ticks(),
            format,
        }
    }

    fn header(&self) -> Vec<&'static str> {
        if self.diff_ticks.is_some() {
            vec![
                "self_before",
                "self_after",
                "total_before",
                "total_after",
                "total_before%",
                "total_after%",
                "change",
                "nodes",
                "function",
            ]
        } else {
            vec!["self", "self%", "total", "total%", "nodes", "function"]
        }
    }

    fn cells(&self, r: &FunctionStats) -> Vec<String> {
        let x = |t: u64| self.values.exact(t);
        let pct = |v: u64, of: u64| {
            if of == 0 {
                "0.00%".to_string()
            } else {
                format!("{:.2}%", v as f64 * 100.0 / of as f64)
            }
        };
        let name = self.names.get(r.name).to_string();
        match self.diff_ticks {
            Some((lt, rt)) => {
                let (rs, rtot) = (r.self_ticks - r.left_self, r.total - r.left_total);
                let (lp, rp) = diff_shares(r.left_total, rtot, lt, rt);
                let change = if r.left_total == 0 && rtot > 0 {
                    "new".to_string()
                } else if rtot == 0 && r.left_total > 0 {
                    "removed".to_string()
                } else {
                    format!("{:+.2}%", relative_change(lp, rp))
                };
                vec![
                    x(r.left_self),
                    x(rs),
                    x(r.left_total),
                    x(rtot),
                    pct(r.left_total, lt),
                    pct(rtot, rt),
                    change,
                    r.nodes.to_string(),
                    name,
                ]
            }
            None => vec![
                x(r.self_ticks),
                pct(r.self_ticks, self.total),
                x(r.total),
                pct(r.total, self.total),
                r.nodes.to_string(),
                name,
            ],
        }
    }

    fn unit_line(&self) -> String {
        let unit = match &self.values.unit {
            Unit::Samples | Unit::TraceSamples => match self.values.sample_rate_hz {
                Some(hz) if hz > 0 => format!("samples (at {hz} Hz)"),
                _ => "samples".to_string(),
            },
            u => u.name().to_string(),
        };
        format!(
            "values in {unit}; total {}; {} functions shown; total counts recursion once",
            self.values.exact(self.total),
            self.rows.len()
        )
    }
}

/// A CSV field, quoted when it must be.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A TSV field: backslash, tab and line ends escaped (`\\`, `\t`, `\n`, `\r`).
fn tsv_field(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

impl Display for Top<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header = self.header();
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| self.cells(r)).collect();
        match self.format {
            TopFormat::Tsv | TopFormat::Csv => {
                let (sep, field): (&str, fn(&str) -> String) = if self.format == TopFormat::Tsv {
                    ("\t", tsv_field)
                } else {
                    (",", csv_field)
                };
                writeln!(f, "{}", header.join(sep))?;
                for r in &rows {
                    let cells: Vec<String> = r.iter().map(|c| field(c)).collect();
                    writeln!(f, "{}", cells.join(sep))?;
                }
            }
            TopFormat::Text => {
                writeln!(f, "{}", self.unit_line())?;
                // Numbers right-aligned to their column's widest cell; the name last.
                let cols = header.len();
                let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
                for r in &rows {
                    for (w, c) in width.iter_mut().zip(&r[..cols - 1]) {
                        *w = (*w).max(c.chars().count());
                    }
                }
                let line = |cells: &[&str]| {
                    let mut s = String::new();
                    for (i, c) in cells.iter().enumerate() {
                        if i + 1 < cols {
                            let _ = write!(s, "{c:>w$}  ", w = width[i]);
                        } else {
                            s.push_str(&c.escape_debug().to_string());
                        }
                    }
                    s
                };
                writeln!(f, "{}", line(&header))?;
                for r in &rows {
                    let cells: Vec<&str> = r.iter().map(String::as_str).collect();
                    writeln!(f, "{}", line(&cells))?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::folded::parse;

    #[test]
    fn text_is_sorted_aligned_and_exact() {
        let p = parse(
            "t.txt",
            b"main;work;leaf 6.5\nmain;work 2\nmain;idle 1.5\nmain;work;work 2\n",
        )
        .unwrap();
        let out = Top::of(&p, None, None, TopFormat::Text).to_string();
        let want = [
            "values in samples; total 12; 4 functions shown; total counts recursion once",
            "self   self%  total   total%  nodes  function",
            " 6.5  54.17%    6.5   54.17%      1  leaf",
            "   4  33.33%   10.5   87.50%      2  work",
            " 1.5  12.50%    1.5   12.50%      1  idle",
            "   0   0.00%     12  100.00%      1  main",
        ];
        assert_eq!(out, want.map(|l| format!("{l}\n")).concat());
        let two = Top::of(&p, Some(SortKey::Total), Some(2), TopFormat::Text).to_string();
        assert!(two.lines().nth(2).unwrap().ends_with("main"));
        assert_eq!(two.lines().count(), 4);
    }

    #[test]
    fn tsv_and_csv_escape_names() {
        let p = parse("t.txt", b"a,\"b\";x\ty 3\nplain 1\n").unwrap();
        let tsv = Top::of(&p, Some(SortKey::Name), None, TopFormat::Tsv).to_string();
        assert_eq!(
            tsv,
            "self\tself%\ttotal\ttotal%\tnodes\tfunction\n\
             0\t0.00%\t3\t75.00%\t1\ta,\"b\"\n\
             1\t25.00%\t1\t25.00%\t1\tplain\n\
             3\t75.00%\t3\t75.00%\t1\tx\\ty\n"
        );
        let csv = Top::of(&p, Some(SortKey::Name), None, TopFormat::Csv).to_string();
        assert!(
            csv.contains("\n0,0.00%,3,75.00%,1,\"a,\"\"b\"\"\"\n"),
            "{csv}"
        );
    }

    #[test]
    fn diffs_get_both_sides_and_the_change() {
        let p = parse("d.txt", b"a;b 10 20\na;c 10 0\na;d 0 5\na 80 75\n").unwrap();
        let out = Top::of(&p, None, None, TopFormat::Tsv).to_string();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "self_before\tself_after\ttotal_before\ttotal_after\ttotal_before%\ttotal_after%\tchange\tnodes\tfunction"
        );
        // Sorted by the absolute change of share: b 10% -> 20%, c removed, d new.
        assert_eq!(lines[1], "10\t20\t10\t20\t10.00%\t20.00%\t+100.00%\t1\tb");
        assert!(lines[2].ends_with("removed\t1\tc"), "{}", lines[2]);
        assert!(lines[3].ends_with("new\t1\td"), "{}", lines[3]);
        assert!(lines[4].ends_with("+0.00%\t1\ta"), "{}", lines[4]);
    }
}
