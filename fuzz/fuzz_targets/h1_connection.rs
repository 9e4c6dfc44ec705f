#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shootout_fuzz::h1_connection::check(data));
