package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

func TestExportTimeout(t *testing.T) {
	for _, tc := range []struct {
		name, general, traces string
		want                  time.Duration
		wantErr               string
	}{
		{name: "default", want: exitTimeout},
		{name: "general", general: "250", want: 250 * time.Millisecond},
		{name: "the signal's own wins", general: "250", traces: "40", want: 40 * time.Millisecond},
		{name: "not a number", general: "5s", wantErr: `OTEL_EXPORTER_OTLP_TIMEOUT "5s": want a positive number of milliseconds`},
		{name: "zero", traces: "0", wantErr: `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT "0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", tc.general)
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", tc.traces)
			got, err := exportTimeout("TRACES")
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.True(t, isUsage(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestFlushBounded runs the exit export against collectors that never answer,
// in virtual time. The export ends at the longest of the providers' bounds
// (they export at once, not one after the other), or at a Ctrl-C during it.
// After an interrupt of the conversation it goes on to its bound.
func TestFlushBounded(t *testing.T) {
	blackHole := func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}
	for _, tc := range []struct {
		name             string
		interruptedFirst bool          // the conversation was interrupted
		ctrlC            time.Duration // a Ctrl-C this long into the export; 0 for none
		took             time.Duration
		interrupted      bool
	}{
		{name: "black hole", took: 3 * time.Second},
		{name: "Ctrl-C during the export", ctrlC: 100 * time.Millisecond, took: 100 * time.Millisecond, interrupted: true},
		{name: "after an interrupted conversation", interruptedFirst: true, took: 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var stderr bytes.Buffer
				e := &exporters{stderr: &stderr, shutdowns: []shutdown{{blackHole, 3 * time.Second}, {blackHole, 2 * time.Second}}}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.interruptedFirst {
					cancel()
				}
				if tc.ctrlC > 0 {
					time.AfterFunc(tc.ctrlC, cancel)
				}
				start := time.Now()
				err := e.flush(ctx)
				assert.Equal(t, tc.took, time.Since(start))
				if tc.interrupted {
					require.ErrorIs(t, err, context.Canceled)
					assert.Equal(t, exitInterrupted, report(&stderr, err))
					assert.Equal(t, "converse: interrupted while exporting telemetry: context canceled\n", stderr.String())
					return
				}
				require.NoError(t, err)
				assert.Equal(t, "converse: exporting telemetry: context deadline exceeded\ncontext deadline exceeded\n", stderr.String())
			})
		})
	}
}

// TestTelemetryInterruptDuringExport: a first Ctrl-C while converse
// exports to a collector that never answers ends it at once with status
// 130, though the conversation had finished.
func TestTelemetryInterruptDuringExport(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	exporting := make(chan struct{})
	go func() {
		conn, err := ln.Accept() // and never answer
		if err != nil {
			return
		}
		t.Cleanup(func() { conn.Close() })
		close(exporting)
	}()
	srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hello.")))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+ln.Addr().String(), "OTEL_EXPORTER_OTLP_TIMEOUT=600000"),
		"-endpoint", srv.URL, "hi")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exporting:
	case err := <-exited:
		require.FailNow(t, "converse exited before it exported", "%v\n%s", err, stderr.String())
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = <-exited
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr:\n%s", stderr.String())
	checkRace(t, exit.ExitCode(), stderr.String())
	assert.Equal(t, exitInterrupted, exit.ExitCode(), stderr.String())
	assert.Equal(t, "Hello.\n", stdout.String())
	assert.Contains(t, stderr.String(), "converse: interrupted while exporting telemetry")
}

// TestTelemetrySDKErrorsRedacted: an export the collector rejects while
// converse runs is reported by the OpenTelemetry SDK's error handler. Its line
// goes through converse's redacting standard error. The collector's answer,
// echoing a session token, reaches it redacted.
func TestTelemetrySDKErrorsRedacted(t *testing.T) {
	t.Parallel()
	const token = "IQoJb3JpZ2luX2VjEAAaCXVzLWVhc3QtMSJHMEUCIQDcollectorTestTokenXYZ0123456789"
	exported := make(chan struct{})
	var once sync.Once
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Error(w, "rejected: x-amz-security-token: "+token, http.StatusBadRequest)
		once.Do(func() { close(exported) })
	}))
	t.Cleanup(collector.Close)
	var calls sync.Mutex
	n, script := 0, multiply()
	srv := newServer(t, bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		calls.Lock()
		n++
		call := n
		calls.Unlock()
		if call == 2 { // the first turn's spans have been exported, and rejected
			select {
			case <-exported:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return script.ServeConverse(ctx, req)
	}))
	out := runBinary(t, testEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL, "OTEL_BSP_SCHEDULE_DELAY=1"),
		nil, "-endpoint", srv.URL, "What is 6 times 7?")
	require.NotEqual(t, raceExit, out.code, out.stderr)
	assert.Contains(t, out.stderr, "converse: telemetry: ")
	assert.Contains(t, out.stderr, "[REDACTED]")
	assert.NotContains(t, out.stderr, token)
	for _, line := range strings.Split(strings.TrimSpace(out.stderr), "\n") {
		assert.True(t, strings.HasPrefix(line, "converse: "), "a line of converse's, not the log package's: %q", line)
	}
}
