package tokencount

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/louter/louter/translate"
)

func encodeImage(t *testing.T, format string, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// webpHeader builds the first bytes of a WebP file of each chunk kind.
func webpHeader(kind string, w, h int) string {
	b := make([]byte, 30)
	copy(b, "RIFF")
	copy(b[8:], "WEBP")
	copy(b[12:], kind)
	switch kind {
	case "VP8X":
		w, h = w-1, h-1
		b[24], b[25], b[26] = byte(w), byte(w>>8), byte(w>>16)
		b[27], b[28], b[29] = byte(h), byte(h>>8), byte(h>>16)
	case "VP8 ":
		b[23], b[24], b[25] = 0x9d, 0x01, 0x2a
		b[26], b[27] = byte(w), byte(w>>8)
		b[28], b[29] = byte(h), byte(h>>8)
	case "VP8L":
		b[20] = 0x2f
		bits := uint32(w-1) | uint32(h-1)<<14
		b[21], b[22], b[23], b[24] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func TestImageSize(t *testing.T) {
	tests := []struct {
		name string
		data string
		w, h int
		ok   bool
	}{
		{"png", encodeImage(t, "png", 640, 480), 640, 480, true},
		{"jpeg", encodeImage(t, "jpeg", 1200, 800), 1200, 800, true},
		{"gif", encodeImage(t, "gif", 33, 77), 33, 77, true},
		{"webp extended", webpHeader("VP8X", 3000, 2000), 3000, 2000, true},
		{"webp lossy", webpHeader("VP8 ", 1024, 768), 1024, 768, true},
		{"webp lossless", webpHeader("VP8L", 500, 400), 500, 400, true},
		{"not an image", base64.StdEncoding.EncodeToString([]byte("hello, world, this is text")), 0, 0, false},
		{"not base64", "!!!", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, h, ok := ImageSize(tt.data)
			if w != tt.w || h != tt.h || ok != tt.ok {
				t.Errorf("ImageSize = %d×%d %v, want %d×%d %v", w, h, ok, tt.w, tt.h, tt.ok)
			}
		})
	}
}

// TestImageTokens checks the formulas against the providers' published
// examples.
func TestImageTokens(t *testing.T) {
	tests := []struct {
		w, h    int
		backend *Framing
		detail  string
		want    int
	}{
		{1000, 1000, Anthropic, "", 1333}, // Anthropic: 1000×1000 ≈ 1334
		{1092, 1092, Anthropic, "", 1590}, // Anthropic: max size for 1:1 ≈ 1590
		{200, 200, Anthropic, "", 53},     // Anthropic: 200×200 ≈ 54
		{4000, 4000, Anthropic, "", 1600}, // scaled down to ~1,600
		{1024, 1024, OpenAI, "", 765},     // OpenAI: 1024² high → 4 tiles
		{2048, 4096, OpenAI, "", 1105},    // OpenAI: → 768×1536, 6 tiles
		{4096, 8192, OpenAI, "low", 85},
		{384, 384, Gemini, "", 258},
		{1000, 1000, Gemini, "", 1032},
		{0, 10, Gemini, "", 0},
	}
	for _, tt := range tests {
		if got := ImageTokens(tt.w, tt.h, tt.backend, tt.detail); got != tt.want {
			t.Errorf("ImageTokens(%d, %d, %s, %q) = %d, want %d", tt.w, tt.h, framingName(tt.backend), tt.detail, got, tt.want)
		}
	}
}

func TestPDFPages(t *testing.T) {
	pdf := []byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\n2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>\n3 0 obj << /Type /Page >>\n4 0 obj <</Type/Page/Parent 2 0 R>>\n")
	if n := PDFPages(pdf); n != 2 {
		t.Errorf("PDFPages = %d, want 2", n)
	}
	req := &translate.Request{Messages: []translate.Message{{Role: translate.RoleUser, Parts: []translate.Part{
		{Type: translate.PartDocument, Media: &translate.Media{MediaType: "application/pdf", Data: base64.StdEncoding.EncodeToString(pdf)}},
	}}}}
	base := Count(&translate.Request{Messages: []translate.Message{{Role: translate.RoleUser}}}, Gemini, "")
	if got := Count(req, Gemini, "") - base; got != 2*258 {
		t.Errorf("a 2-page PDF costs Gemini %d, want %d", got, 2*258)
	}
}
