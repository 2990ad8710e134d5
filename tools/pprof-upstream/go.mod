module protoprof.dev/tools/pprof-upstream

go 1.26.0

require github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b

require github.com/ianlancetaylor/demangle v0.0.0-20250417193237-f615e6bd150b // indirect
