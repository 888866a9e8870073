//! Previews of big inputs made from generated workloads: a plain pprof profile is previewed
//! from runs of samples across the file (its tables, written after the samples, read
//! whole), and its shares approximate the whole profile's; a gzipped one gets the same
//! preview from its decompressed bytes while it loads, and so do a gzipped speedscope file
//! (its frames written after its profiles) and a gzipped gecko profile in Firefox's order
//! (a thread's tables after its samples).

use scorch::generator::{GenFormat, GenOptions, Limit, Workload, generate};
use scorch::import::preview::{PreviewExtent, PreviewOptions, preview_bytes};
use scorch::import::{self, Imported};
use scorch::model::Profile;

fn w1_pprof(bytes: u64) -> Vec<u8> {
    let mut data = Vec::new();
    let opts = GenOptions {
        workload: Workload::W1,
        format: Some(GenFormat::Pprof),
        seed: 11,
        limit: Some(Limit::Bytes(bytes)),
    };
    generate(&opts, &mut data).unwrap();
    data
}

/// The share of the total under each child of the root, by name.
fn shares(p: &Profile) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = p
        .tree
        .children(0)
        .iter()
        .map(|&c| {
            let share = p.tree.total(c) as f64 / p.tree.grand_total() as f64;
            (p.names.get(p.tree.name(c)).to_string(), share)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// `data` gzipped.
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, data).unwrap();
    gz.finish().unwrap()
}

/// `bytes` written to a file of the temporary directory named after this process and
/// `suffix`.
fn temp_file(suffix: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("scorch-preview-{}{suffix}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Previews of inputs from 1 MiB (gzip: 1 KiB) that read `head_bytes` of a head.
fn small_inputs(head_bytes: usize) -> PreviewOptions {
    PreviewOptions {
        min_bytes: 1 << 20,
        min_gzip_bytes: 1 << 10,
        slices: 32,
        max_sampled_bytes: 2 << 20,
        head_bytes,
    }
}

/// The progressive load of `path` with `opts`, and the preview it handed over, if any.
fn load_previewed(
    path: &std::path::Path,
    opts: &PreviewOptions,
) -> (
    Result<Imported, import::ImportError>,
    Option<scorch::import::preview::Preview>,
) {
    let mut seen = None;
    let loaded =
        import::load_any_path_progressive(path, Default::default(), None, Some(opts), |p| {
            seen = Some(p)
        });
    (loaded, seen)
}

#[test]
fn a_big_pprof_is_previewed_from_runs_of_samples_across_it() {
    let data = w1_pprof(4_000_000);
    let opts = PreviewOptions {
        min_bytes: 1 << 20,
        min_gzip_bytes: 1 << 20,
        slices: 32,
        max_sampled_bytes: 2 << 20,
        head_bytes: 64 << 10,
    };
    let preview = preview_bytes("w1.pb", &data, &opts).expect("a preview");
    // Half of folded stacks' budget: 16 runs of 64 KiB (each to the next sample field).
    let PreviewExtent::Sampled {
        slices,
        sampled_bytes,
        total_bytes,
        decompressed: false,
    } = preview.extent
    else {
        panic!("{:?}", preview.extent)
    };
    assert_eq!((slices, total_bytes), (16, data.len() as u64));
    assert!(
        (16 << 16..17 << 16).contains(&sampled_bytes),
        "{sampled_bytes}"
    );
    let Imported::Profile(part) = preview.imported else {
        panic!("a profile")
    };
    let Imported::Profile(whole) =
        import::load_any_bytes("w1.pb", &data, Default::default()).unwrap()
    else {
        panic!("a profile")
    };
    assert!(part.tree.grand_total() < whole.tree.grand_total() / 3);
    let (a, b) = (shares(&part), shares(&whole));
    assert_eq!(a.len(), b.len(), "{a:?} {b:?}");
    for ((na, sa), (nb, sb)) in a.iter().zip(&b) {
        assert_eq!(na, nb);
        assert!(
            (sa - sb).abs() < 0.06,
            "{na}: {sa} in the preview, {sb} in all"
        );
    }

    // Under the size for previews: none; gzipped: none from the file (the tables end the
    // stream; the load makes it from the decompressed bytes, below).
    let big = PreviewOptions {
        min_bytes: 1 << 30,
        ..opts
    };
    assert!(preview_bytes("w1.pb", &data, &big).is_none());
    let gz = gzip(&data);
    assert!(preview_bytes("w1.pb.gz", &gz, &opts).is_none());
}

/// A gzipped pprof: the load decompresses it whole, hands the preview of the decompressed
/// bytes over before it parses them all, and loads the same profile as without one.
#[test]
fn a_big_gzipped_pprof_is_previewed_once_decompressed() {
    let data = w1_pprof(4_000_000);
    let gz = gzip(&data);
    let path = temp_file(".pb.gz", &gz);
    let opts = small_inputs(64 << 10);
    let (loaded, seen) = load_previewed(&path, &opts);
    let plain = import::load_any_path(&path);
    // Compressed under the size for previews: none.
    let small = PreviewOptions {
        min_gzip_bytes: gz.len() as u64 + 1,
        ..opts
    };
    let (also, none) = load_previewed(&path, &small);
    std::fs::remove_file(&path).unwrap();
    assert!(none.is_none());
    let preview = seen.expect("a preview of the decompressed pprof");
    assert!(
        matches!(
            preview.extent,
            PreviewExtent::Sampled {
                slices: 16,
                decompressed: true,
                total_bytes,
                ..
            } if total_bytes == data.len() as u64
        ),
        "{:?}",
        preview.extent
    );
    let Imported::Profile(part) = preview.imported else {
        panic!("a profile")
    };
    assert!(part.meta.gzipped);
    let (Imported::Profile(whole), Imported::Profile(plain), Imported::Profile(also)) =
        (loaded.unwrap(), plain.unwrap(), also.unwrap())
    else {
        panic!("profiles")
    };
    assert!(whole.meta.gzipped);
    for p in [&plain, &also] {
        assert_eq!(p.tree.grand_total(), whole.tree.grand_total());
        assert_eq!(p.tree.len(), whole.tree.len());
    }
    assert!(part.tree.grand_total() < whole.tree.grand_total() / 3);
    for ((na, sa), (nb, sb)) in shares(&part).iter().zip(&shares(&whole)) {
        assert_eq!(na, nb);
        assert!(
            (sa - sb).abs() < 0.06,
            "{na}: {sa} in the preview, {sb} in all"
        );
    }
}

/// A sampled speedscope file as speedscope and py-spy write it (`shared` frames after the
/// profiles, weights after the samples): `n` samples of 1–12 of 40 frames.
fn speedscope_file(n: usize) -> Vec<u8> {
    let mut state = 5u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let depth = 1 + next() % 12;
        let frames: Vec<String> = (0..depth).map(|_| (next() % 40).to_string()).collect();
        samples.push(format!("[{}]", frames.join(",")));
    }
    let weights: Vec<String> = (0..n).map(|_| (1 + next() % 9).to_string()).collect();
    let frames: Vec<String> = (0..40)
        .map(|i| format!(r#"{{"name":"f{i}","file":"m.py","line":{i}}}"#))
        .collect();
    format!(
        r#"{{"exporter":"t","$schema":"https://www.speedscope.app/file-format-schema.json","profiles":[{{"type":"sampled","name":"main","unit":"milliseconds","startValue":0,"endValue":100,"samples":[{}],"weights":[{}]}}],"shared":{{"frames":[{}]}}}}"#,
        samples.join(","),
        weights.join(","),
        frames.join(",")
    )
    .into_bytes()
}

/// A gzipped speedscope file: its frames end the stream, so a decompressed prefix shows
/// nothing; the load decompresses it whole and hands over the same preview the plain file
/// gets (its first samples, with their frames and weights), then loads the same profile.
#[test]
fn a_big_gzipped_speedscope_file_is_previewed_once_decompressed() {
    let data = speedscope_file(200_000);
    let gz = gzip(&data);
    let path = temp_file(".speedscope.json.gz", &gz);
    let opts = small_inputs(256 << 10);
    assert!(
        preview_bytes("t.json.gz", &gz, &opts).is_none(),
        "not from the prefix"
    );
    let (loaded, seen) = load_previewed(&path, &opts);
    // Compressed under the size for previews, or decompressed under the plain one: none.
    let mut none = Vec::new();
    for small in [
        PreviewOptions {
            min_gzip_bytes: gz.len() as u64 + 1,
            ..opts
        },
        PreviewOptions {
            min_bytes: data.len() as u64 + 1,
            ..opts
        },
    ] {
        let (also, preview) = load_previewed(&path, &small);
        assert!(matches!(also, Ok(Imported::Profile(_))));
        none.extend(preview);
    }
    std::fs::remove_file(&path).unwrap();
    assert!(none.is_empty());
    let preview = seen.expect("a preview of the decompressed speedscope file");
    let want = preview_bytes("t.json", &data, &opts).expect("the plain file's preview");
    let PreviewExtent::Head {
        head_bytes,
        total_bytes,
        gzipped: true,
    } = preview.extent
    else {
        panic!("{:?}", preview.extent)
    };
    assert_eq!(total_bytes, gz.len() as u64);
    assert!(matches!(want.extent, PreviewExtent::Head { head_bytes: h, .. } if h == head_bytes));
    let (Imported::Profile(part), Imported::Profile(plain_part)) =
        (preview.imported, want.imported)
    else {
        panic!("profiles")
    };
    assert!(part.meta.gzipped);
    assert_eq!(part.tree.grand_total(), plain_part.tree.grand_total());
    assert_eq!(shares(&part), shares(&plain_part));
    let (Imported::Profile(whole), Imported::Profile(plain)) = (
        loaded.unwrap(),
        import::load_any_bytes("t.json", &data, Default::default()).unwrap(),
    ) else {
        panic!("profiles")
    };
    assert!(whole.meta.gzipped && !plain.meta.gzipped);
    assert_eq!(whole.tree.grand_total(), plain.tree.grand_total());
    assert_eq!(whole.tree.len(), plain.tree.len());
    // A part of the file: the head's samples, every frame among them.
    assert!(head_bytes < data.len() as u64 / 3, "{head_bytes}");
    assert!(part.tree.grand_total() < whole.tree.grand_total() / 3);
    assert_eq!(shares(&part).len(), 40);
}

/// A gecko profile as Firefox writes it: each thread's samples first, its tables after
/// them; `n` samples a thread over five stacks.
fn gecko_file(threads: usize, n: usize) -> Vec<u8> {
    let thread = |k: usize| {
        let rows: Vec<String> = (0..n)
            .map(|i| format!("[{},{}.5,0]", (i * 7 + k) % 5, 10 + i))
            .collect();
        format!(
            r#"{{"processType":"default","name":"T{k}","tid":{k},"pid":1,"registerTime":0,
"samples":{{"schema":{{"stack":0,"time":1,"eventDelay":2}},"data":[{}]}},
"markers":{{"schema":{{"name":0,"startTime":1,"endTime":2,"phase":3,"category":4,"data":5}},"data":[]}},
"stackTable":{{"schema":{{"prefix":0,"frame":1}},"data":[[null,0],[0,1],[1,2],[1,3],[3,4]]}},
"frameTable":{{"schema":{{"location":0,"line":1}},"data":[[0,null],[1,2],[2],[3],[4,9]]}},
"stringTable":["main{k}","a","b","c","d"]}}"#,
            rows.join(",")
        )
    };
    let threads: Vec<String> = (0..threads).map(thread).collect();
    format!(
        r#"{{"meta":{{"version":27,"startTime":1000,"interval":1,"configuration":{{"threads":["GeckoMain"]}}}},"libs":[],
"threads":[{}],"pausedRanges":[],"processes":[]}}"#,
        threads.join(",\n")
    )
    .into_bytes()
}

/// A gzipped gecko profile in Firefox's order: its decompressed prefix holds samples
/// without their thread's tables, so the load decompresses it whole and hands over the
/// plain file's preview (the thread the head stops in, with its tables found after it).
#[test]
fn a_big_gzipped_gecko_profile_is_previewed_once_decompressed() {
    let data = gecko_file(3, 60_000);
    let gz = gzip(&data);
    let path = temp_file(".gecko.json.gz", &gz);
    let opts = small_inputs(256 << 10);
    assert!(
        preview_bytes("g.json.gz", &gz, &opts).is_none(),
        "not from the prefix"
    );
    let (loaded, seen) = load_previewed(&path, &opts);
    std::fs::remove_file(&path).unwrap();
    let preview = seen.expect("a preview of the decompressed gecko profile");
    let want = preview_bytes("g.json", &data, &opts).expect("the plain file's preview");
    assert_eq!(
        preview.extent,
        PreviewExtent::Head {
            head_bytes: match want.extent {
                PreviewExtent::Head { head_bytes, .. } => head_bytes,
                ref e => panic!("{e:?}"),
            },
            total_bytes: gz.len() as u64,
            gzipped: true,
        }
    );
    let (Imported::Profile(part), Imported::Profile(plain_part)) =
        (preview.imported, want.imported)
    else {
        panic!("profiles")
    };
    assert!(part.meta.gzipped);
    assert_eq!(part.tree.grand_total(), plain_part.tree.grand_total());
    assert_eq!(shares(&part), shares(&plain_part));
    assert!(part.tree.grand_total() > 0);
    let whole = loaded.unwrap();
    let plain = import::load_any_bytes("g.json", &data, Default::default()).unwrap();
    let count = |i: &Imported| match i {
        Imported::Profile(p) => p.tree.grand_total(),
        Imported::Trace(t) => t.spans.len() as u64,
    };
    assert_eq!(count(&whole), count(&plain));
    assert!(
        part.tree.grand_total() < 3 * 60_000 / 3,
        "{}",
        part.tree.grand_total()
    );
}
