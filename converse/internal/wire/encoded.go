package wire

import (
	"bytes"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
)

// Encoded returns d as a document that keeps its JSON. The SDK encodes a
// document again, by reflection, at every request that carries it. A
// conversation carries the same ones at every turn: each tool's input
// schema, and each call's input and each tool's result in the history.
// Encoded's is encoded once, here, with the SDK's own encoder, so the
// bytes a request carries do not change. Decoding it is d's
// (UnmarshalSmithyDocument). A document that cannot be encoded is returned
// as it is, to fail where it would have.
func Encoded(d document.Interface) document.Interface {
	if d == nil {
		return nil
	}
	if _, ok := d.(*encoded); ok {
		return d
	}
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		return d
	}
	return &encoded{Interface: d, json: b}
}

// encoded is a document with its JSON. It embeds the document it encodes
// for the SDK's unexported marker method and for decoding.
type encoded struct {
	document.Interface
	json []byte
}

// MarshalSmithyDocument returns a copy of the JSON, which its caller may
// change: a tool is handed its input's.
func (d *encoded) MarshalSmithyDocument() ([]byte, error) {
	return bytes.Clone(d.json), nil
}
