package tools

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStrftime(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	tuesday := time.Date(2024, time.March, 5, 14, 7, 9, 123456789, cet)
	newYear := time.Date(2021, time.January, 1, 0, 5, 0, 0, time.UTC)
	tests := []struct {
		format string
		t      time.Time
		want   string
	}{
		{"%Y-%m-%d %H:%M:%S", tuesday, "2024-03-05 14:07:09"},
		{"%y %b %B %h", tuesday, "24 Mar March Mar"},
		{"%a %A %u %w", tuesday, "Tue Tuesday 2 2"},
		{"%j %U %W %V %G %g", tuesday, "065 09 10 10 2024 24"},
		{"%I %l %k %p", tuesday, "02  2 14 PM"},
		{"%Z %z", tuesday, "CET +0100"},
		{"%f", tuesday, "123456"},
		{"%e|%C|%s", tuesday, " 5|20|1709644029"},
		{"%F %T", tuesday, "2024-03-05 14:07:09"},
		{"%D %R %r", tuesday, "03/05/24 14:07 02:07:09 PM"},
		{"%c", tuesday, "Tue Mar  5 14:07:09 2024"},
		{"%x %X", tuesday, "03/05/24 14:07:09"},
		{"%-d/%-m %-I%p %-j %-M", tuesday, "5/3 2PM 65 7"},
		{"100%% sure%n%t", tuesday, "100% sure\n\t"},
		{"no directives", tuesday, "no directives"},
		{"", tuesday, ""},
		{"%I %p %U %W %V %G %g", newYear, "12 AM 00 00 53 2020 20"},
		{"%c", newYear, "Fri Jan  1 00:05:00 2021"},
		{"%Z %z %-S", newYear, "UTC +0000 0"},
		{"día %d", newYear, "día 01"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			got, err := strftime(tt.t, tt.format)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStrftimeErrors(t *testing.T) {
	tests := []struct {
		format string
		want   string
	}{
		{"%Q", `unknown directive "%Q"`},
		{"%Y-%E", `unknown directive "%E"`},
		{"%-Q", `unknown directive "%-Q"`},
		{"%é", `unknown directive "%é"`},
		{"%Y %", `incomplete directive "%" at the end of the format`},
		{"%-", `incomplete directive "%-" at the end of the format`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			_, err := strftime(time.Now(), tt.format)
			assert.EqualError(t, err, tt.want)
		})
	}
}
