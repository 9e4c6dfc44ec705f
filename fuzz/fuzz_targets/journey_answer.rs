#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shootout_fuzz::journey_answer::check(data));
