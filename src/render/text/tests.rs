//! Tests of text measuring, cutting and caching.

use super::*;

#[test]
fn prefix_search() {
    let m = Measure {
        width: 30.0,
        ends: vec![(10.0, 1), (20.0, 2), (30.0, 3)],
    };
    assert_eq!(m.prefix_fitting(9.0), 0);
    assert_eq!(m.prefix_fitting(10.0), 1);
    assert_eq!(m.prefix_fitting(25.0), 2);
    assert_eq!(m.prefix_fitting(100.0), 3);
    // Suffixes: "c" is 10 wide, "bc" 20, "abc" 30.
    assert_eq!(m.suffix_start_fitting(9.0), 3);
    assert_eq!(m.suffix_start_fitting(10.0), 2);
    assert_eq!(m.suffix_start_fitting(25.0), 1);
    assert_eq!(m.suffix_start_fitting(30.0), 0);
}

/// A tail-fitted label is an ellipsis and a suffix of the name, as wide as allowed
/// at most, and the longest such suffix (one more glyph would not fit).
#[test]
fn tail_fit_keeps_the_longest_suffix_that_fits() {
    let mut fs = font_system();
    let name = "com.example.service.RequestHandler.handleIncoming";
    let m = measure_shaped(&mut fs, name, 12.0);
    let ell = measure_shaped(&mut fs, ELLIPSIS, 12.0).width;
    for max_w in [20.0f32, 40.0, 75.5, 120.0, 200.0] {
        let start = m.suffix_start_fitting(max_w - ell);
        let tail = &name[start..];
        let w = measure_shaped(&mut fs, tail, 12.0).width;
        assert!(w <= max_w - ell + 0.01, "{max_w}: {tail:?} is {w} wide");
        if start > 0 {
            let one_more = &name[start - 1..];
            let w1 = measure_shaped(&mut fs, one_more, 12.0).width;
            assert!(w1 > max_w - ell, "{max_w}: {one_more:?} would fit too");
        }
    }
}

/// Issue 14, failure 1: a name with a newline followed by multibyte characters, long
/// enough to be cut, panicked (glyph offsets of the second line are counted from that
/// line's start, not the text's). Control characters are drawn escaped, on one line.
#[test]
fn panic_when_a_label_is_truncated() {
    let mut shaper = Shaper::new();
    let name = format!("x\ny{}", "中".repeat(400));
    let mut cuts = 0;
    for part in [LabelFit::Head, LabelFit::Tail] {
        for max_w in (0..400).map(|i| i as f32 * 7.5) {
            if let Some(t) = shaper.cut(part, &name, 12.0, max_w) {
                cuts += 1;
                assert!(!t.contains('\n'), "{t:?}");
                assert!(shaper.width(&t, 12.0) <= max_w + 0.01, "{t:?} in {max_w}");
            }
        }
    }
    assert!(cuts > 500, "{cuts} cuts");
    let head = shaper.cut(LabelFit::Head, &name, 12.0, 60.0).unwrap();
    assert!(head.starts_with("x\\ny"), "{head:?}");
    assert!(shaper.width(&name, 12.0) > shaper.width("x\\ny", 12.0));
}

/// The shaping budget counts the time spent shaping, not the time since the frame
/// began: laying out thousands of cached labels took longer than the budget, so every
/// string still to shape was left for a later frame, which was out of time as soon
/// (the frames benchmark zoomed back out over the same labels and still left
/// thousands undrawn in each frame).
#[test]
fn labels_left_undrawn_with_warm_caches() {
    let mut shaper = Shaper::new();
    shaper.budget = Some(Duration::from_micros(400));
    // A frame's layout, longer than the budget, before the first new string.
    std::thread::sleep(Duration::from_millis(2));
    shaper.width("task::step_1", 12.0);
    assert_eq!(shaper.deferred, 0);
    assert_eq!(
        shaper.measures.get(12.0, "task::step_1").map(|m| m.1),
        Some(true)
    );
    // Once the shaping itself has taken the budget, new strings wait.
    shaper.spent = Duration::from_micros(400);
    shaper.width("task::step_2", 12.0);
    assert_eq!(shaper.deferred, 1);
    assert_eq!(
        shaper.measures.get(12.0, "task::step_2").map(|m| m.1),
        Some(false)
    );
}

/// Names measured and cut by id read exactly as by their text, for plain, escaped,
/// capped, multibyte and right-to-left names, at two sizes, from two interners, with
/// time to shape and without (estimates).
#[test]
fn names_by_id_measure_and_cut_as_their_text() {
    // With time, without (estimates), and estimates then time to shape them.
    for budgets in [
        &[None][..],
        &[Some(Duration::ZERO)],
        &[Some(Duration::ZERO), None],
    ] {
        names_by_id_as_their_text(budgets);
    }
}

fn names_by_id_as_their_text(budgets: &[Option<Duration>]) {
    let texts = [
        "task::step_12".to_string(),
        "12.5 ms".to_string(),
        "x\ny\tz".to_string(),
        "a\nb".to_string(),
        "com.example.service.RequestHandler.handleIncoming".to_string(),
        "中文名字的函数".repeat(3),
        "שלום עולם".to_string(),
        "abcdefghij".repeat(1000),
        "VAV".to_string(),
    ];
    let mut a = Names::new();
    let mut b = Names::new();
    b.intern("something else first");
    let mut by_id = Shaper::new();
    let mut by_text = Shaper::new();
    for names in [&mut a, &mut b] {
        for t in &texts {
            names.intern(t);
        }
        names.intern("tab\\there");
        names.intern("tab\there");
    }
    let rounds = [&a, &b, &a]
        .into_iter()
        .flat_map(|n| budgets.iter().map(move |&b| (n, b)));
    let (mut fit_id, mut fit_text) = (Shaper::new(), Shaper::new());
    for (names, budget) in rounds {
        for s in [&mut by_id, &mut by_text] {
            s.budget = budget;
            s.deferred = 0;
        }
        for size in [11.0f32, 13.0] {
            for (id, text) in names.iter() {
                assert_eq!(
                    by_id.name_width(names, id, size),
                    by_text.width(text, size),
                    "{text:?}"
                );
                for part in [LabelFit::Head, LabelFit::Tail] {
                    for max_w in [0.0f32, 5.0, 9.5, 20.0, 41.0, 77.7, 150.0, 400.0] {
                        assert_eq!(
                            by_id
                                .name_cut(part, names, id, size, max_w)
                                .map(|l| l.shown().into_owned()),
                            by_text.cut(part, text, size, max_w),
                            "{text:?} {part:?} {max_w}"
                        );
                        assert_eq!(by_id.deferred, by_text.deferred, "{text:?}");
                        // The width and the cut in one lookup: what the two give (with
                        // shapers of their own, which shape all they are asked).
                        let w = fit_text.width(text, size);
                        let want = if w <= max_w {
                            Some(w.to_string())
                        } else {
                            fit_text.cut(part, text, size, max_w)
                        };
                        let got = match fit_id.name_fit(part, names, id, size, max_w) {
                            NameFit::Whole(w) => Some(w.to_string()),
                            NameFit::Cut(l) => Some(l.shown().into_owned()),
                            NameFit::Nothing => None,
                        };
                        assert_eq!(got, want, "name_fit {text:?} {part:?} {max_w}");
                    }
                }
            }
        }
    }
}

/// Advances found in the ASCII tables equal those shaped one by one, whatever the
/// order of sizes (three sizes in turn overflow the two tables).
#[test]
fn ascii_advances_equal_shaped_ones() {
    let mut cached = Shaper::new();
    let mut fs = font_system();
    let sizes = [11.0f32, 13.0, 17.5];
    for round in 0..3 {
        for (k, &size) in sizes.iter().enumerate().cycle().skip(round).take(7) {
            for c in ['0', '7', '.', ' ', 'µ', 'n', 's', '×', 'W'] {
                let want = measure_shaped(&mut fs, c.encode_utf8(&mut [0; 4]), size).width;
                assert_eq!(cached.advance(c, size), want, "{c:?} at {size} ({k})");
            }
        }
    }
}

/// The bit set of plain characters is [`PLAIN`].
#[test]
fn plain_characters_are_those_of_plain() {
    for c in (0..0x3000).filter_map(char::from_u32) {
        assert_eq!(is_plain_char(c), PLAIN.contains(c), "{c:?}");
    }
    assert!(is_plain("12.5 µs") && is_plain("×2") && !is_plain("") && !is_plain("a_b"));
}

#[test]
fn control_characters_are_drawn_escaped() {
    assert_eq!(
        drawable("a\tb\r\nc\u{1b}[0m\u{85}\u{2028}", false).0,
        "a\\tb\\r\\nc\\u{1b}[0m\\u{85}\\u{2028}"
    );
    assert!(matches!(
        drawable("main.work", false),
        (Cow::Borrowed("main.work"), false)
    ));
    // Escaping twice changes nothing: a cut label is drawn as it was measured.
    let once = drawable("x\ny", false).0.into_owned();
    assert_eq!(drawable(&once, false).0, once);
}

/// Issue 14, failure 4: a 20 MB frame name was shaped whole. Only the first (or last)
/// [`MAX_TEXT_CHARS`] characters are measured, and a text cut there ends in an
/// ellipsis.
#[test]
fn abort_shaping_a_20_mb_frame_name() {
    let name = "abcdefghij".repeat(2_000_000);
    let (head, capped) = drawable(&name, false);
    assert!(capped);
    assert_eq!(head.chars().count(), MAX_TEXT_CHARS);
    assert!(name.starts_with(head.as_ref()));
    let tail = drawable(&format!("{name}\n"), true).0.into_owned();
    assert_eq!(tail.chars().count(), MAX_TEXT_CHARS);
    assert!(tail.ends_with("ij\\n"), "{}", &tail[tail.len() - 8..]);
    // An escape is kept whole or left out, never split.
    let ctl = drawable(&"\u{1}".repeat(MAX_TEXT_CHARS), false)
        .0
        .into_owned();
    assert_eq!(ctl.len(), MAX_TEXT_CHARS / 6 * 6);

    let mut shaper = Shaper::new();
    let w = shaper.width(&name, 11.0);
    assert!(w > 16_384.0, "{w}");
    let cut = shaper.cut(LabelFit::Tail, &name, 11.0, 300.0).unwrap();
    assert!(cut.starts_with(ELLIPSIS) && cut.ends_with("hij"), "{cut}");
    assert!(
        shaper
            .measures
            .keys()
            .all(|k| k.chars().count() <= MAX_TEXT_CHARS),
        "only capped texts are measured"
    );
}

/// The caches' two generations: what was used since the last turn survives it, the
/// rest goes, and no more than twice the cap is held.
#[test]
fn text_caches_keep_what_frames_use_and_no_more_than_twice_their_cap() {
    let mut g: Generations<u32> = Generations::new(4);
    for (i, t) in ["a", "b", "c", "d"].iter().enumerate() {
        g.insert(11.0, t, i as u32);
    }
    // "a" used again, then four new strings turn the generations twice.
    assert_eq!(g.get(11.0, "a"), Some(0));
    assert_eq!(g.get(12.0, "a"), None, "sizes apart");
    for t in ["e", "f", "g"] {
        g.insert(11.0, t, 9);
    }
    assert_eq!(g.get(11.0, "a"), Some(0), "used, so kept");
    assert_eq!(g.get(11.0, "b"), Some(1), "previous generation");
    g.insert(11.0, "h", 9);
    g.insert(11.0, "i", 9);
    assert_eq!(g.get(11.0, "c"), None, "unused for two turns");
    assert!(g.keys().count() <= 8);
}

#[test]
fn bundled_font_shapes_text() {
    let mut fs = font_system();
    let mut b = Buffer::new(&mut fs, Metrics::new(12.0, 15.0));
    b.set_wrap(Wrap::None);
    b.set_text("main.work", &attrs(), Shaping::Advanced, None);
    b.shape_until_scroll(&mut fs, false);
    let w: f32 = b.layout_runs().map(|r| r.line_w).sum();
    // DejaVu Sans at 12 px: roughly 6-7 px per character.
    assert!(w > 40.0 && w < 80.0, "width {w}");
}

/// Adding per-character advances gives exactly the shaped extents for strings of
/// [`PLAIN`] characters: every pair of them (kerning is per pair) and typical labels,
/// at the sizes frames use.
#[test]
fn plain_sums_equal_shaping() {
    let mut fs = font_system();
    let chars: Vec<char> = PLAIN.chars().collect();
    for size in [11.0f32, 12.0, 13.0, 16.5, 22.0, 24.0] {
        let adv: HashMap<char, f32> = chars
            .iter()
            .map(|&c| (c, measure_shaped(&mut fs, &c.to_string(), size).width))
            .collect();
        let sum = |t: &str| {
            let mut x = 0.0f32;
            let mut ends = Vec::new();
            for (i, c) in t.char_indices() {
                x += adv[&c];
                ends.push((x, i + c.len_utf8()));
            }
            Measure { width: x, ends }
        };
        let mut texts: Vec<String> = Vec::new();
        for &a in &chars {
            for &b in &chars {
                texts.push(format!("{a}{b}"));
            }
        }
        texts.extend(
            [
                "73.2 ns",
                "1.25 µs",
                "12 ms",
                "3.5 s",
                "2 min",
                "(12.5%, 1,234)",
                "99.99%",
                "+100%",
                "-3.2%",
                "320 MiB",
                "4.1 MB",
                "12:30",
                "1/2 ×3",
                "10 d",
                "7 h",
            ]
            .map(String::from),
        );
        for t in &texts {
            let want = measure_shaped(&mut fs, t, size);
            let got = sum(t);
            assert!(
                (want.width - got.width).abs() < 1e-3,
                "{t:?} at {size}: shaped {} vs summed {}",
                want.width,
                got.width
            );
            assert_eq!(want.ends.len(), got.ends.len(), "{t:?}");
            for (w, g) in want.ends.iter().zip(&got.ends) {
                assert!(
                    (w.0 - g.0).abs() < 1e-3 && w.1 == g.1,
                    "{t:?} at {size}: {want:?} vs {got:?}"
                );
            }
        }
    }
}
