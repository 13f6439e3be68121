package wire

import "testing"

func TestErrorMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"message":"a"}`:            "a",
		`{"Message":"b"}`:            "b",
		`"<html>Bad Gateway</html>"`: "<html>Bad Gateway</html>",
		`{"other":1}`:                `{"other":1}`,
		``:                           ``,
	} {
		if got := ErrorMessage([]byte(body)); got != want {
			t.Errorf("ErrorMessage(%s) = %q, want %q", body, got, want)
		}
	}
}
