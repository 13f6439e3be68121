//go:build !race

package converse_test

// raceDetector: see race_on_test.go.
const raceDetector = false
