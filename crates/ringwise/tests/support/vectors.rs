//! Reads the `hash,buckets,bucket` vector files of `fixtures/` (lines
//! starting with `#` are their provenance header).

/// Every `(hash, buckets, bucket)` line of `text`, in file order.
pub fn vectors(text: &str) -> Vec<(u64, u32, u32)> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let [hash, buckets, bucket] = fields[..] else {
                panic!("not hash,buckets,bucket: {line:?}");
            };
            let parse = |s: &str| s.parse::<u64>().unwrap_or_else(|e| panic!("{line:?}: {e}"));
            (parse(hash), parse(buckets) as u32, parse(bucket) as u32)
        })
        .collect()
}
