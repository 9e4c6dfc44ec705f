#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shootout_fuzz::store_samples::check(data));
