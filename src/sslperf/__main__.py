from sslperf.cli import main

main()
