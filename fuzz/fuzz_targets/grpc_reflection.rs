#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shootout_fuzz::grpc_reflection::check(data));
