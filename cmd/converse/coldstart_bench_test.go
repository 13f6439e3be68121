package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// BenchmarkColdStart measures what a user waits for before converse does
// anything, on a converse built without the race detector or coverage
// (outside the timing):
//
//   - command=run: from exec of `converse -endpoint URL "prompt"` to its
//     first request reaching bedrocktest;
//   - command=serve: from exec of `converse serve` to its first successful
//     GET /ping.
//
// ms/op is that time; the op's own time, which includes the process's exit,
// is not reported.
func BenchmarkColdStart(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "converse")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("building converse: %v\n%s", err, out)
	}
	arrived := make(chan time.Time, 1)
	srv := bedrocktest.NewServer(bedrocktest.HandlerFunc(func(context.Context, *bedrocktest.Request) (*bedrocktest.Reply, error) {
		select {
		case arrived <- time.Now():
		default:
		}
		return bedrocktest.Text("Hello."), nil
	}), func(o *bedrocktest.Options) { o.MaxRequests = 0 })
	defer srv.Close()
	env := benchEnv(b.TempDir())
	b.Run("command=run", func(b *testing.B) {
		benchReport(b, func() time.Duration { return benchRunStart(b, bin, env, srv.URL, arrived) })
	})
	b.Run("command=serve", func(b *testing.B) {
		sessions := b.TempDir()
		benchReport(b, func() time.Duration { return benchServeStart(b, bin, env, srv.URL, sessions) })
	})
}

// benchEnv is testEnv's environment for a benchmark, with home as HOME.
func benchEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ACCESS_KEY_ID=" + fakeKeyID,
		"AWS_SECRET_ACCESS_KEY=" + fakeSecret,
		"AWS_SESSION_TOKEN=" + fakeToken,
		"AWS_REGION=us-east-1",
	}
}

// benchReport runs start once an op and reports the mean of the times it
// returns as ms/op, in place of the op's own time.
func benchReport(b *testing.B, start func() time.Duration) {
	var total time.Duration
	for b.Loop() {
		total += start()
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(total)/float64(time.Millisecond)/float64(b.N), "ms/op")
}

// benchRunStart runs converse on a prompt and returns the time from its
// exec to its first request's arrival at the server, once it has exited.
func benchRunStart(b *testing.B, bin string, env []string, url string, arrived <-chan time.Time) time.Duration {
	cmd := exec.Command(bin, "-endpoint", url, "Say hello.")
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case at := <-arrived:
		if err := <-exited; err != nil {
			b.Fatalf("converse: %v\n%s", err, out.Bytes())
		}
		return at.Sub(began)
	case err := <-exited:
		b.Fatalf("converse exited before its request (%v):\n%s", err, out.Bytes())
		return 0
	}
}

// benchServeAddr finds the address in serve's first line.
var benchServeAddr = regexp.MustCompile(`on (http://\S+) `)

// benchServeStart runs converse serve on a free port of loopback and
// returns the time from its exec to its first successful GET /ping, once
// it has stopped on SIGTERM.
func benchServeStart(b *testing.B, bin string, env []string, url, sessions string) time.Duration {
	cmd := exec.Command(bin, "serve", "-addr", "127.0.0.1:0", "-endpoint", url, "-sessions", sessions)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	lines := bufio.NewReader(stderr)
	first, err := lines.ReadString('\n')
	addr := benchServeAddr.FindStringSubmatch(first)
	if err != nil || addr == nil {
		cmd.Process.Kill()
		b.Fatalf("converse serve's first line names no address (%v): %q", err, first)
	}
	if err := benchPing(addr[1]); err != nil {
		cmd.Process.Kill()
		b.Fatal(err)
	}
	took := time.Since(began)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, lines)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("converse serve on SIGTERM: %v", err)
	}
	return took
}

// benchPing asks base's /ping once: serve listens before it writes its
// first line, so the first request is answered.
func benchPing(base string) error {
	req, err := http.NewRequest(http.MethodGet, base+"/ping", nil)
	if err != nil {
		return err
	}
	req.Close = true // no connection left to the server, which is stopped next
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /ping: %s", resp.Status)
	}
	return nil
}
