// go-pprof-check runs Go's reference pprof parser on each file it is given:
// profile.Parse followed by CheckValid, printing "ok" or the error per file.
// It exits 1 if any file fails.
//
// Its go.mod pins github.com/google/pprof; the tests build it into
// target/go-bin (protoprof_tests::go_tool):
//
//	cd tools/go-pprof-check && go run . FILE...
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
