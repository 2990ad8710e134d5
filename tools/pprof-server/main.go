// pprof-server: a real net/http/pprof server for protoprof's fetch tests,
// on loopback only. It serves Go's own /debug/pprof/ handlers, plus
// /fixed/NAME, the bytes of a file given on the command line (so that a
// fetched profile can be compared with `go tool pprof` on the same bytes).
//
// It listens three times: plain HTTP, HTTPS with a certificate of its own
// test CA, and HTTPS that also requires a client certificate of that CA.
// The CA, the server's and a client's certificate and key are written as
// PEM files into -tls-dir. It prints one line per listener ("http URL",
// "https URL", "mtls URL") and serves until its standard input closes, so
// it ends with the test that started it.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	tlsDir := flag.String("tls-dir", "", "directory for the PEM files")
	flag.Parse()
	for _, file := range flag.Args() {
		serveFixed(file)
	}
	// Something for the heap and CPU profiles to show.
	go churn()

	ca, caKey := newCA()
	serverCert := issue(ca, caKey, "pprof-server", x509.ExtKeyUsageServerAuth)
	clientCert := issue(ca, caKey, "protoprof", x509.ExtKeyUsageClientAuth)
	if *tlsDir != "" {
		writePEM(filepath.Join(*tlsDir, "ca.pem"), "CERTIFICATE", ca.Raw)
		writePEM(filepath.Join(*tlsDir, "client.pem"), "CERTIFICATE", clientCert.Certificate[0])
		key, err := x509.MarshalPKCS8PrivateKey(clientCert.PrivateKey)
		check(err)
		writePEM(filepath.Join(*tlsDir, "client-key.pem"), "PRIVATE KEY", key)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)

	listen("http", nil)
	listen("https", &tls.Config{Certificates: []tls.Certificate{serverCert}})
	listen("mtls", &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	})
	io.Copy(io.Discard, os.Stdin)
}

// serveFixed serves the bytes of file at /fixed/<its base name>.
func serveFixed(file string) {
	bytes, err := os.ReadFile(file)
	check(err)
	http.HandleFunc("/fixed/"+filepath.Base(file), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(bytes)
	})
}

func listen(name string, config *tls.Config) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	scheme := "http"
	if config != nil {
		listener = tls.NewListener(listener, config)
		scheme = "https"
	}
	fmt.Printf("%s %s://%s\n", name, scheme, listener.Addr())
	go http.Serve(listener, nil)
}

var sink [][]byte

func churn() {
	for i := 0; ; i++ {
		sink = append(sink, make([]byte, 1024))
		if len(sink) > 4096 {
			sink = sink[:0]
		}
		if i%1024 == 0 {
			time.Sleep(time.Millisecond)
		}
		_ = strings.Repeat("x", i%64)
	}
}

func newCA() (*x509.Certificate, *ecdsa.PrivateKey) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(err)
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "protoprof test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	check(err)
	ca, err := x509.ParseCertificate(der)
	check(err)
	return ca, key
}

func issue(ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string, usage x509.ExtKeyUsage) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(err)
	template := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	check(err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func writePEM(path, kind string, der []byte) {
	check(os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
