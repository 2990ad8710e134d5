module protoprof.dev/tools/go-pprof-check

go 1.26.0

require github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
