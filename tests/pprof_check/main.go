// Command pprof_check validates pprof files the way a strict consumer
// (Parca) would: profile.Parse, CheckValid, and then that mapping,
// function and location ids run 1..n in the order they appear in the
// file, since Parca's normalizer indexes those tables by id-1 and refuses
// anything else while the pprof library happily accepts it.
//
// The id order is read from the parsed profile rather than from the raw
// protobuf: for protobuf input, profile.Parse appends each table entry in
// wire order and keeps its id as encoded (postDecode only resolves
// references; renumbering happens only in the legacy text parsers).
//
// Usage: pprof_check FILE... ("-" reads stdin). Exits 0 if every file
// passes, 1 otherwise, 2 on usage error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: pprof_check FILE... (\"-\" reads stdin)")
		os.Exit(2)
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
	}
	status := 0
	for _, name := range flag.Args() {
		summary, err := check(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			status = 1
			continue
		}
		fmt.Printf("%s: ok (%s)\n", name, summary)
	}
	os.Exit(status)
}

func check(name string) (string, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	// Parse already runs CheckValid, so a zero id or a sample with the
	// wrong number of values is reported here.
	p, err := profile.Parse(r)
	if err != nil {
		if strings.Contains(err.Error(), "reserved") {
			return "", fmt.Errorf("%v (id 0 is reserved; ids must start at 1)", err)
		}
		return "", err
	}
	if err := p.CheckValid(); err != nil {
		return "", fmt.Errorf("invalid profile: %v", err)
	}
	for i, m := range p.Mapping {
		if err := seq("mapping", i, m.ID); err != nil {
			return "", err
		}
	}
	for i, f := range p.Function {
		if err := seq("function", i, f.ID); err != nil {
			return "", err
		}
	}
	for i, l := range p.Location {
		if err := seq("location", i, l.ID); err != nil {
			return "", err
		}
	}
	types := make([]string, len(p.SampleType))
	for i, st := range p.SampleType {
		types[i] = st.Type + "/" + st.Unit
	}
	return fmt.Sprintf("%d samples, %d locations, %d sample types: %s",
		len(p.Sample), len(p.Location), len(p.SampleType), strings.Join(types, ",")), nil
}

// seq reports a table entry whose id is not its 1-based position.
func seq(kind string, i int, id uint64) error {
	if id == uint64(i+1) {
		return nil
	}
	return fmt.Errorf("%s %d has id %d: ids must run 1..n in order (Parca refuses: not sequential)", kind, i+1, id)
}
