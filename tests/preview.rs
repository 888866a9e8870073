//! Previews of big inputs made from generated workloads: a plain pprof profile is previewed
//! from runs of samples across the file (its tables, written after the samples, read
//! whole), and its shares approximate the whole profile's; a gzipped one gets the same
//! preview from its decompressed bytes while it loads.

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
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &data).unwrap();
    let gz = gz.finish().unwrap();
    assert!(preview_bytes("w1.pb.gz", &gz, &opts).is_none());
}

/// A gzipped pprof: the load decompresses it whole, hands the preview of the decompressed
/// bytes over before it parses them all, and loads the same profile as without one.
#[test]
fn a_big_gzipped_pprof_is_previewed_once_decompressed() {
    let data = w1_pprof(4_000_000);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &data).unwrap();
    let gz = gz.finish().unwrap();
    let path = std::env::temp_dir().join(format!("scorch-preview-{}.pb.gz", std::process::id()));
    std::fs::write(&path, &gz).unwrap();
    let opts = PreviewOptions {
        min_bytes: 1 << 20,
        min_gzip_bytes: 1 << 10,
        slices: 32,
        max_sampled_bytes: 2 << 20,
        head_bytes: 64 << 10,
    };
    let mut seen = None;
    let loaded =
        import::load_any_path_progressive(&path, Default::default(), None, Some(&opts), |p| {
            seen = Some(p)
        });
    let plain = import::load_any_path(&path);
    // Compressed under the size for previews: none.
    let mut none = None;
    let small = PreviewOptions {
        min_gzip_bytes: gz.len() as u64 + 1,
        ..opts
    };
    let also =
        import::load_any_path_progressive(&path, Default::default(), None, Some(&small), |p| {
            none = Some(p)
        });
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
