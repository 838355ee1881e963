from benchmarks.zh_short_lines.run import main

main()
