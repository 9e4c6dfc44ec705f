#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shootout_fuzz::h2_connection::check(data));
