// pprofbench times Go's reference pprof implementation on one file:
//
//	pprofbench OP FILE REPS
//
// OP is parse (profile.ParseData), parse-check (+ CheckValid), parse-write
// (+ Write, which gzips) or parse-write-raw (+ WriteUncompressed). It prints
// "median_ns peak_rss_kb": the median of REPS runs of OP on the bytes read
// once, and the process's peak resident set (VmHWM).
//
// Its go.mod pins github.com/google/pprof (cargo xtask bench-compare builds it):
//
//	cd bench/go && go build -o pprofbench .
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: pprofbench parse|parse-check|parse-write|parse-write-raw FILE REPS")
		os.Exit(2)
	}
	op, path := os.Args[1], os.Args[2]
	reps, err := strconv.Atoi(os.Args[3])
	check(err)
	data, err := os.ReadFile(path)
	check(err)
	pipeline := func() {
		p, err := profile.ParseData(data)
		check(err)
		switch op {
		case "parse":
		case "parse-check":
			check(p.CheckValid())
		case "parse-write":
			check(p.Write(io.Discard))
		case "parse-write-raw":
			check(p.WriteUncompressed(io.Discard))
		default:
			check(fmt.Errorf("unknown op %q", op))
		}
	}
	// One untimed run first: the timed runs see a warm process (a grown
	// heap), as a long-running collector would.
	pipeline()
	times := make([]int64, 0, reps)
	for i := 0; i < reps; i++ {
		start := time.Now()
		pipeline()
		times = append(times, time.Since(start).Nanoseconds())
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	fmt.Printf("%d %d\n", times[len(times)/2], peakRSS())
}

// peakRSS is VmHWM from /proc/self/status, in kB.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "VmHWM:") {
			kb, _ := strconv.ParseInt(strings.Fields(s.Text())[1], 10, 64)
			return kb
		}
	}
	return 0
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
