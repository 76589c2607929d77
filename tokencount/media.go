package tokencount

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	_ "image/gif"  // registers GIF for image.DecodeConfig
	_ "image/jpeg" // registers JPEG for image.DecodeConfig
	_ "image/png"  // registers PNG for image.DecodeConfig
	"io"
	"strings"

	"github.com/louter/louter/translate"
)

// An image costs what the backend's Framing.Image says of its size in
// pixels, read from the first bytes of the base64 data (the PNG, GIF or WebP
// header, the JPEG frame header) without decoding the picture. An image by
// URL or file id, or one whose size cannot be read, is taken as 1024×1024.

// defaultSide is the side of an image whose size is unknown.
const defaultSide = 1024

// headerBytes bounds how much of an image is decoded to find its size: a JPEG
// frame header may follow a large EXIF block.
const headerBytes = 256 << 10

func imageTokens(m *translate.Media, f *Framing) int {
	w, h := defaultSide, defaultSide
	if m != nil && m.Data != "" {
		if x, y, ok := ImageSize(m.Data); ok {
			w, h = x, y
		}
	}
	detail := ""
	if m != nil {
		detail = m.Detail
	}
	return ImageTokens(w, h, f, detail)
}

// ImageTokens returns what an image of w×h pixels costs a backend of
// framing f (f.Image; nil f: OpenAI's); detail is the image detail the
// request asked for ("low", "high", "auto", or "").
func ImageTokens(w, h int, f *Framing, detail string) int {
	f = f.orDefault()
	if w <= 0 || h <= 0 || f.Image == nil {
		return 0
	}
	return f.Image(w, h, detail)
}

// ImageSize reads an image's width and height from the start of its base64
// data. It understands PNG, JPEG, GIF and WebP.
func ImageSize(b64 string) (w, h int, ok bool) {
	r := io.LimitReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(b64)), headerBytes)
	var head [30]byte
	n, _ := io.ReadFull(r, head[:])
	if n >= 30 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP" {
		return webpSize(head[:n])
	}
	cfg, _, err := image.DecodeConfig(io.MultiReader(bytes.NewReader(head[:n]), r))
	if err != nil {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// webpSize reads the size from a WebP file's first chunk header.
func webpSize(b []byte) (int, int, bool) {
	switch string(b[12:16]) {
	case "VP8X": // extended: 24-bit width-1 and height-1
		w := int(b[24]) | int(b[25])<<8 | int(b[26])<<16
		h := int(b[27]) | int(b[28])<<8 | int(b[29])<<16
		return w + 1, h + 1, true
	case "VP8 ": // lossy: 14-bit sizes after the frame tag and start code
		w := int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff)
		h := int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff)
		return w, h, w > 0 && h > 0
	case "VP8L": // lossless: 14-bit width-1 and height-1 after the signature
		bits := binary.LittleEndian.Uint32(b[21:25])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, true
	}
	return 0, 0, false
}

// Documents: a text document costs its text; a PDF costs the backend's
// per-page figure (Framing.PDFPage), with the pages counted from the PDF's
// page objects.
//
// Estimate does not decode a PDF: it takes one page per pdfBytesPerPage of
// base64 data.
func documentTokens(m *translate.Media, f *Framing, c counter) int {
	if m == nil {
		return 0
	}
	if strings.HasPrefix(m.MediaType, "text/") && m.Data != "" {
		if raw, err := base64.StdEncoding.DecodeString(m.Data); err == nil {
			return c.text(string(raw))
		}
		return c.text(m.Data) // some clients send plain text as the data
	}
	pages := 1
	switch {
	case m.Data == "":
	case !c.exact:
		pages = max(1, len(m.Data)/pdfBytesPerPage)
	default:
		if raw, err := base64.StdEncoding.DecodeString(m.Data); err == nil {
			pages = max(1, PDFPages(raw))
		}
	}
	return f.PDFPage * pages
}

// pdfBytesPerPage is the base64 size of an average PDF page, for Estimate.
const pdfBytesPerPage = 64 << 10

// PDFPages counts a PDF's page objects ("/Type /Page", not "/Pages").
func PDFPages(pdf []byte) int {
	n := 0
	for i := 0; ; {
		j := bytes.Index(pdf[i:], []byte("/Type"))
		if j < 0 {
			return n
		}
		i += j + len("/Type")
		rest := bytes.TrimLeft(pdf[i:min(len(pdf), i+16)], " \r\n\t")
		if bytes.HasPrefix(rest, []byte("/Page")) && !bytes.HasPrefix(rest, []byte("/Pages")) {
			n++
		}
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
