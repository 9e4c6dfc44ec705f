fn main() {
    std::process::exit(shootout_cli::main())
}
