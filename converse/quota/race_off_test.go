//go:build !race

package quota_test

// raceDetector: see race_on_test.go.
const raceDetector = false
