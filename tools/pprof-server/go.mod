module protoprof.dev/tools/pprof-server

go 1.26.0
