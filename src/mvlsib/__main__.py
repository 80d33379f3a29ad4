from mvlsib.cli import build_cli

if __name__ == "__main__":
    build_cli()
