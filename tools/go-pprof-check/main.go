// go-pprof-check runs Go's reference pprof parser on each file it is given:
// profile.Parse followed by CheckValid, printing "ok" or the error per file.
// It exits 1 if any file fails.
//
// Build in GOPATH mode against Debian's golang-github-google-pprof-dev
// (no module downloads):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run tools/go-pprof-check/main.go FILE...
package main

import (
	"fmt"
	"os"

	"github.com/google/pprof/profile"
)

func main() {
	failed := false
	for _, path := range os.Args[1:] {
		if err := check(path); err != nil {
			fmt.Printf("%s: %v\n", path, err)
			failed = true
		} else {
			fmt.Printf("%s: ok\n", path)
		}
	}
	if failed {
		os.Exit(1)
	}
}

func check(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return err
	}
	return p.CheckValid()
}
