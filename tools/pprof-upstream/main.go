// Upstream pprof (github.com/google/pprof at the version go.mod pins), the
// oracle for symbolization: Go's own `go tool pprof` has no inline frames
// and no C++ demangling. It runs pprof's driver as pprof's main does.
package main

import (
	"fmt"
	"os"

	"github.com/google/pprof/driver"
)

func main() {
	if err := driver.PProf(&driver.Options{}); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(2)
	}
}
