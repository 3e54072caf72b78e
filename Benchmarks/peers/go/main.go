// go-net-http: Go's net/http client driven with the load of CurlewBenchmark (Benchmarks/Sources/
// CurlewBenchmark), so its rows can stand in the same table.
//
//	go-net-http --url http://127.0.0.1:18089/small.json [--status-url http://127.0.0.1:18089/nginx_status]
//	            [--expected-bytes 225] [--requests 5000] [--warmup 200] [--concurrency 1,16,64]
//	            [--rounds 1] [--ca-file ca.pem] [--http-version 1.1|2] [--no-header]
//
// Per concurrency level and round: a fresh http.Client (its own Transport, keep-alive, up to
// c idle connections kept per host), a warm-up batch, then the measured batch, with exactly c
// requests in flight (c goroutines claiming request slots from a shared counter, as the Swift
// TaskGroupDriver does). Each body is read whole (io.ReadAll); a status other than 200, a body
// length other than --expected-bytes or a transport error is a failure, printed on stderr, and
// makes the exit status 1.
//
// A row is: requests/s of the measured batch, p50/p99 latency (nearest rank), CPU µs per request
// (getrusage(RUSAGE_SELF) user+sys around the measured batch: every thread of the process), context
// switches per request (ru_nvcsw+ru_nivcsw of the same getrusage, as ContextSwitches.swift counts),
// connections nginx accepted during warm-up and measurement (stub_status, when --status-url is
// given), failures. With --rounds N each metric is the median of the N rounds.
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const clientName = "go-net-http"

type options struct {
	url           string
	statusURL     string
	expectedBytes int // -1: any length
	requests      int
	warmup        int
	levels        []int
	rounds        int
	caFile        string
	http2         bool
	header        bool
}

func usage() string {
	return "usage: go-net-http [--url URL] [--status-url URL] [--expected-bytes N] [--requests N] [--warmup N]\n" +
		"                   [--concurrency 1,16,64] [--rounds N] [--ca-file PEM] [--http-version 1.1|2] [--no-header]"
}

func parseOptions(args []string) (options, error) {
	o := options{
		url: "http://127.0.0.1:18089/small.json", expectedBytes: -1, requests: 5000, warmup: 200,
		levels: []int{1, 16, 64}, rounds: 1, header: true,
	}
	positive := func(flag, text string) (int, error) {
		n, err := strconv.Atoi(text)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%s expects a positive integer, got %q", flag, text)
		}
		return n, nil
	}
	for i := 0; i < len(args); i++ {
		flag := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", flag)
			}
			i++
			return args[i], nil
		}
		var err error
		var v string
		switch flag {
		case "--url":
			o.url, err = value()
		case "--status-url":
			o.statusURL, err = value()
		case "--expected-bytes", "--expect-bytes":
			if v, err = value(); err == nil {
				o.expectedBytes, err = positive(flag, v)
			}
		case "--requests", "-n":
			if v, err = value(); err == nil {
				o.requests, err = positive(flag, v)
			}
		case "--rounds":
			if v, err = value(); err == nil {
				o.rounds, err = positive(flag, v)
			}
		case "--warmup":
			if v, err = value(); err == nil {
				o.warmup, err = strconv.Atoi(v)
				if err != nil || o.warmup < 0 {
					err = fmt.Errorf("--warmup expects a non-negative integer, got %q", v)
				}
			}
		case "--concurrency", "-c":
			if v, err = value(); err == nil {
				o.levels = nil
				for _, part := range strings.Split(v, ",") {
					n, perr := positive(flag, part)
					if perr != nil {
						return o, perr
					}
					o.levels = append(o.levels, n)
				}
			}
		case "--ca-file":
			o.caFile, err = value()
		case "--http-version":
			if v, err = value(); err == nil {
				switch v {
				case "1.1":
					o.http2 = false
				case "2":
					o.http2 = true
				default:
					err = fmt.Errorf("--http-version expects 1.1 or 2, got %q", v)
				}
			}
		case "--no-header":
			o.header = false
		case "--help", "-h":
			fmt.Println(usage())
			os.Exit(0)
		default:
			err = fmt.Errorf("unknown argument %q", flag)
		}
		if err != nil {
			return o, err
		}
	}
	if u, err := url.Parse(o.url); err != nil || u.Host == "" {
		return o, fmt.Errorf("--url is not an absolute URL: %s", o.url)
	}
	return o, nil
}

// newClient returns a fresh client whose Transport keeps up to `concurrency` idle keep-alive
// connections to the host (the default, 2, would close and reopen connections at c > 2).
func newClient(o options, concurrency int) (*http.Client, error) {
	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0, // no limit across hosts
		MaxIdleConnsPerHost: concurrency,
		IdleConnTimeout:     120 * time.Second,
	}
	if o.caFile != "" {
		pem, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in %s", o.caFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	if o.http2 {
		// A Transport with a custom TLS config or dialer only offers h2 when asked.
		transport.ForceAttemptHTTP2 = true
	} else {
		// A non-nil, empty map switches HTTP/2 off (HTTP/1.1 only, as the Swift 1.1 rows).
		transport.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &http.Client{Transport: transport}, nil
}

type sample struct {
	latencies    []int64 // nanoseconds, by request slot
	failures     int64
	firstFailure atomic.Value // string
	protocol     atomic.Value // string: the first response's protocol ("HTTP/1.1", "HTTP/2.0")
}

// drive sends `requests` GETs with exactly `concurrency` in flight until the batch runs out.
func drive(client *http.Client, o options, requests, concurrency int) *sample {
	s := &sample{latencies: make([]int64, requests)}
	var next int64 = -1
	var wg sync.WaitGroup
	fail := func(message string) {
		atomic.AddInt64(&s.failures, 1)
		s.firstFailure.CompareAndSwap(nil, message)
	}
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				slot := atomic.AddInt64(&next, 1)
				if slot >= int64(requests) {
					return
				}
				start := time.Now()
				resp, err := client.Get(o.url)
				if err != nil {
					s.latencies[slot] = int64(time.Since(start))
					fail(err.Error())
					continue
				}
				s.protocol.CompareAndSwap(nil, resp.Proto)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				s.latencies[slot] = int64(time.Since(start))
				switch {
				case err != nil:
					fail("reading the body: " + err.Error())
				case resp.StatusCode != 200:
					fail(fmt.Sprintf("status %d", resp.StatusCode))
				case o.expectedBytes >= 0 && len(body) != o.expectedBytes:
					fail(fmt.Sprintf("body of %d bytes, expected %d", len(body), o.expectedBytes))
				}
			}
		}()
	}
	wg.Wait()
	return s
}

// usage: user+system CPU microseconds and voluntary+involuntary context switches of the process.
func processUsage() (cpuMicros int64, switches int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	micros := func(t syscall.Timeval) int64 { return int64(t.Sec)*1_000_000 + int64(t.Usec) }
	return micros(ru.Utime) + micros(ru.Stime), int64(ru.Nvcsw) + int64(ru.Nivcsw)
}

// accepts reads nginx's stub_status `accepts` counter over its own Connection: close socket (nginx
// counts that connection before answering, hence the -1 in connection counts).
func accepts(statusURL string) (int, error) {
	u, err := url.Parse(statusURL)
	if err != nil || u.Scheme != "http" {
		return 0, fmt.Errorf("the status URL must be http://: %s", statusURL)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	conn, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, u.Host)
	page, err := io.ReadAll(bufio.NewReader(conn))
	if err != nil {
		return 0, err
	}
	lines := strings.Split(string(page), "\n")
	for i, line := range lines {
		if strings.Contains(line, "server accepts handled requests") && i+1 < len(lines) {
			fields := strings.Fields(lines[i+1])
			if len(fields) > 0 {
				if n, err := strconv.Atoi(fields[0]); err == nil {
					return n, nil
				}
			}
		}
	}
	return 0, errors.New("unexpected stub_status page")
}

type result struct {
	requestsPerSecond, p50ms, p99ms, cpuMicrosPerRequest, switchesPerRequest float64
	connections                                                              int // -1: unknown
	failures                                                                 int
}

// percentile: nearest rank of ascending values, as RunResult.percentile.
func percentile(sorted []int64, fraction float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(fraction * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return float64(sorted[rank-1])
}

func run(o options, concurrency int) (result, error) {
	before := 0
	if o.statusURL != "" {
		var err error
		if before, err = accepts(o.statusURL); err != nil {
			return result{}, err
		}
	}
	client, err := newClient(o, concurrency)
	if err != nil {
		return result{}, err
	}
	if o.warmup > 0 {
		w := drive(client, o, o.warmup, concurrency)
		if w.failures > 0 {
			fmt.Fprintf(os.Stderr, "  warm-up: %d failures, first: %v\n", w.failures, w.firstFailure.Load())
		}
	}
	cpuStart, switchesStart := processUsage()
	wallStart := time.Now()
	s := drive(client, o, o.requests, concurrency)
	wall := time.Since(wallStart)
	cpuEnd, switchesEnd := processUsage()
	connections := -1
	if o.statusURL != "" {
		after, err := accepts(o.statusURL)
		if err != nil {
			return result{}, err
		}
		connections = after - before - 1
	}
	client.CloseIdleConnections()
	fmt.Fprintf(os.Stderr, "  protocol: %v, connections: %d\n", s.protocol.Load(), connections)
	if s.failures > 0 {
		fmt.Fprintf(os.Stderr, "  %d failures, first: %v\n", s.failures, s.firstFailure.Load())
	}
	sort.Slice(s.latencies, func(i, j int) bool { return s.latencies[i] < s.latencies[j] })
	n := float64(o.requests)
	return result{
		requestsPerSecond:   n / wall.Seconds(),
		p50ms:               percentile(s.latencies, 0.50) / 1e6,
		p99ms:               percentile(s.latencies, 0.99) / 1e6,
		cpuMicrosPerRequest: float64(cpuEnd-cpuStart) / n,
		switchesPerRequest:  float64(switchesEnd-switchesStart) / n,
		connections:         connections,
		failures:            int(s.failures),
	}, nil
}

func median(results []result, metric func(result) float64) float64 {
	values := make([]float64, len(results))
	for i, r := range results {
		values[i] = metric(r)
	}
	sort.Float64s(values)
	m := len(values) / 2
	if len(values)%2 == 1 {
		return values[m]
	}
	return (values[m-1] + values[m]) / 2
}

// row formats the median of the rounds of one level like a row of Report.table.
func row(concurrency int, results []result) string {
	minConn, maxConn, failures := math.MaxInt, math.MinInt, 0
	for _, r := range results {
		if r.connections < minConn {
			minConn = r.connections
		}
		if r.connections > maxConn {
			maxConn = r.connections
		}
		failures += r.failures
	}
	connections := "n/a"
	if minConn >= 0 {
		connections = strconv.Itoa(minConn)
		if maxConn != minConn {
			connections = fmt.Sprintf("%d–%d", minConn, maxConn)
		}
	}
	return fmt.Sprintf("| %s | %d | %.0f | %.3f | %.3f | %.1f | %.2f | %s | %d |",
		clientName, concurrency,
		median(results, func(r result) float64 { return r.requestsPerSecond }),
		median(results, func(r result) float64 { return r.p50ms }),
		median(results, func(r result) float64 { return r.p99ms }),
		median(results, func(r result) float64 { return r.cpuMicrosPerRequest }),
		median(results, func(r result) float64 { return r.switchesPerRequest }),
		connections, failures)
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n%s\n", err, usage())
		os.Exit(64)
	}
	byLevel := map[int][]result{}
	for round := 1; round <= o.rounds; round++ {
		for _, level := range o.levels {
			fmt.Fprintf(os.Stderr, "round %d/%d: %s (%s, GOMAXPROCS=%d), c=%d: %d warm-up + %d requests\n",
				round, o.rounds, clientName, runtime.Version(), runtime.GOMAXPROCS(0), level, o.warmup, o.requests)
			r, err := run(o, level)
			if err != nil {
				fmt.Fprintf(os.Stderr, "error: %v\n", err)
				os.Exit(1)
			}
			byLevel[level] = append(byLevel[level], r)
		}
	}
	if o.header {
		fmt.Println("| client | c | requests/s | p50 ms | p99 ms | CPU µs/req | context switches/req | connections | failures |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	}
	failures := 0
	seen := map[int]bool{}
	for _, level := range o.levels {
		if seen[level] {
			continue
		}
		seen[level] = true
		fmt.Println(row(level, byLevel[level]))
		for _, r := range byLevel[level] {
			failures += r.failures
		}
	}
	if failures > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d failed requests\n", clientName, failures)
		os.Exit(1)
	}
}
