//go:build ignore

// inputs writes the *.in files that Oracle.java turns into *.golden files.
// Run from this directory: go run inputs.go && ./gen.sh
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

var rng = rand.New(rand.NewPCG(1, 2))

func main() {
	write("doubles.in", doubles())
	write("hashmap.in", hashmaps())
	keys := keyInputs()
	write("keys.in", b64All(keys))
	write("values.in", valueInputs())
	write("pairs.in", pairInputs())
}

func write(name string, lines []string) {
	if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		panic(err)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func b64All(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = b64(s)
	}
	return out
}

func hexBits(f float64) string { return fmt.Sprintf("%016x", math.Float64bits(f)) }

func doubles() []string {
	var fs []float64
	fs = append(fs, 0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1),
		math.SmallestNonzeroFloat64, 2*math.SmallestNonzeroFloat64, 3*math.SmallestNonzeroFloat64,
		math.MaxFloat64, 0x1p-1022, math.Nextafter(0x1p-1022, 0),
		100, 1e7, 1e-4, 1e21, 0.1, 1.234e-5, 1e-3, 9999999, 1234567, 0.001, 0.00099, 2e23, 1e23,
		8.41e21, 5e-324, 9.9e-324, 1.0/3, 2.0/3, math.Pi, math.E, -1.5, 123456789012345680, 4.35, 0.3,
		2.82879384806159e17, 1.1e-5, 9.999999e6, 1e6, 1e16, 1e17, 1.7976931348623157e308)
	for e := -324; e <= 308; e++ {
		f, _ := strconv.ParseFloat("1e"+strconv.Itoa(e), 64)
		fs = append(fs, f, math.Nextafter(f, 0), math.Nextafter(f, math.Inf(1)))
	}
	for e := -1074; e <= 1023; e++ {
		f := math.Ldexp(1, e)
		fs = append(fs, f)
		if e%4 == 0 {
			fs = append(fs, math.Nextafter(f, 0), math.Nextafter(f, math.Inf(1)))
		}
	}
	for d := 1; d <= 9; d++ {
		for e := -324; e <= 308; e += 7 {
			f, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", d, e), 64)
			fs = append(fs, f)
		}
	}
	// Every subnormal whose shortest decimal has one digit: there Java picks
	// the closest decimal of two digits (4.9E-324, not 5.0E-324).
	for k := -324; k <= -308; k++ {
		for d := 1; d <= 9; d++ {
			x, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", d, k), 64)
			for _, dir := range []float64{0, math.Inf(1)} {
				for y := x; y != 0 && y < 0x1p-1022 && oneDigit(y); y = math.Nextafter(y, dir) {
					fs = append(fs, y)
				}
			}
		}
	}
	for range 800 {
		fs = append(fs, math.Float64frombits(rng.Uint64()))
	}
	for range 800 {
		f, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", rng.IntN(100000), rng.IntN(60)-30), 64)
		fs = append(fs, -f)
	}
	var out []string
	for _, f := range fs {
		out = append(out, hexBits(f))
	}
	return out
}

func oneDigit(f float64) bool {
	m, _, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	return !strings.Contains(m, ".")
}

func jsonArray(keys []string) string {
	// Lone surrogates are written as \uXXXX escapes, which Jackson reads.
	var sb strings.Builder
	sb.WriteByte('[')
	for i, k := range keys {
		if i > 0 {
			sb.WriteByte(',')
		}
		b, _ := json.Marshal(k)
		sb.Write(b)
	}
	sb.WriteByte(']')
	return sb.String()
}

func collidingFamily(n int) []string {
	// All 2^n strings of n "Aa"/"BB" blocks share one String.hashCode.
	var out []string
	for i := 0; i < 1<<n; i++ {
		var sb strings.Builder
		for j := 0; j < n; j++ {
			if i>>j&1 == 0 {
				sb.WriteString("Aa")
			} else {
				sb.WriteString("BB")
			}
		}
		out = append(out, sb.String())
	}
	return out
}

var names = []string{"topic", "partition", "cluster", "group", "table", "protocol", "server", "database",
	"server_id", "rs", "sourceClusterAlias", "targetClusterAlias", "filename", "offset", "kafka_topic",
	"kafka_partition", "query", "schema", "db", "collection", "shard", "ts_sec", "file", "pos", "snapshot",
	"lsn", "txId", "gtids", "row", "event", "scn", "commit_scn", "change_lsn", "event_serial_no", "sec", "ord"}

func randKey() string {
	switch rng.IntN(6) {
	case 0, 1, 2:
		return names[rng.IntN(len(names))]
	case 3:
		return randText(1 + rng.IntN(12))
	case 4:
		return strconv.Itoa(rng.IntN(1000))
	}
	return names[rng.IntN(len(names))] + "_" + strconv.Itoa(rng.IntN(50))
}

var runes = []rune("abcxyzABCXYZ019_-.:/<>&é中ßΩ\u2028\u2029\u007f \"\\\t\n\x01\x1f😀𝄞")

func randText(n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteRune(runes[rng.IntN(len(runes))])
	}
	return sb.String()
}

func shuffled(in []string) []string {
	out := append([]string(nil), in...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func hashmaps() []string {
	sets := [][]string{
		{"table", "protocol"}, {"protocol", "table"},
		{"topic", "partition", "cluster"}, {"group", "topic", "partition"},
		{"sourceClusterAlias", "targetClusterAlias"}, {"server", "database"}, {"server_id", "rs"},
		{"Aa", "BB"}, {"BB", "Aa"}, {"a"}, {}, {"", "a", "b"},
	}
	fam3, fam4 := collidingFamily(3), collidingFamily(4)
	sets = append(sets, fam3, shuffled(fam3))
	for n := 9; n <= 12; n++ {
		sets = append(sets, shuffled(fam4)[:n], append(shuffled(fam4)[:n], "topic", "partition"))
	}
	for n := 1; n <= 60; n++ {
		var ks []string
		for i := 0; i < n; i++ {
			ks = append(ks, "k"+strconv.Itoa(i))
		}
		sets = append(sets, ks, shuffled(ks))
	}
	for range 400 {
		n := 1 + rng.IntN(40)
		var ks []string
		for range n {
			ks = append(ks, randKey())
		}
		sets = append(sets, ks)
	}
	var out []string
	for _, s := range sets {
		out = append(out, jsonArray(s))
	}
	// Lone surrogates as JSON escapes (Go's json.Marshal would write U+FFFD).
	out = append(out, `["\ud800","\udbff\udfff","\udc00","\ud83d\ude00","a"]`,
		`["\ud800x","a\udc00","\ud83d\ude00","\uffff","\u00e9"]`,
		`["\u00e9","\uffff","\ud83d\ude00","a\udc00","\ud800x"]`)
	return out
}

// encString writes s as a JSON string with a random but valid escaping style.
func encString(s string) string {
	style := rng.IntN(4)
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r < 0x20:
			if style == 1 {
				fmt.Fprintf(&sb, "\\u%04x", r)
			} else {
				fmt.Fprintf(&sb, "\\u%04X", r)
			}
		case style == 2 && r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(&sb, "\\u%04x\\u%04x", 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		case style == 3 && r > 0x7e:
			if r >= 0x10000 {
				r -= 0x10000
				fmt.Fprintf(&sb, "\\u%04X\\u%04X", 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			} else {
				fmt.Fprintf(&sb, "\\u%04X", r)
			}
		case style == 3 && r == '/':
			sb.WriteString(`\/`)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

var numberLits = []string{"0", "1", "-1", "42", "007", "-007", "00", "-0", "0.0", "-0.0", "-0.000", "1.0", "1.50",
	"1e2", "1E2", "1e+2", "1e-2", "0.1e1", "100.0", "1e7", "1.0E7", "1e-4", "1e21", "1e23", "1e400", "-1e400",
	"1e-400", "-1e-400", "0e5", "-0e-5", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
	"-9223372036854775809", "18446744073709551616", "18446744073709551617", "123456789012345678901234567890",
	"-00123456789012345678901234567890", "2147483648", "3.4028235E38", "4.9E-324", "0.30000000000000004",
	"12345678901234567890.5", "00.5", "5e-324", "2.5e-324", "1.7976931348623157e308", "1.7976931348623159e308"}

func randScalar() string {
	switch rng.IntN(6) {
	case 0:
		return encString(randText(rng.IntN(8)))
	case 1:
		return numberLits[rng.IntN(len(numberLits))]
	case 2:
		return strconv.Itoa(rng.IntN(1 << 20))
	case 3:
		return []string{"true", "false", "null"}[rng.IntN(3)]
	case 4:
		return strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(30)-15)), 'g', -1, 64)
	}
	return encString(names[rng.IntN(len(names))])
}

func ws() string {
	if rng.IntN(4) != 0 {
		return ""
	}
	return []string{" ", "\n", "\t", "\r\n", "  "}[rng.IntN(5)]
}

func randValue(depth int) string {
	if depth < 2 && rng.IntN(12) == 0 {
		if rng.IntN(2) == 0 {
			return randObject(depth+1, 0)
		}
		n := rng.IntN(4)
		var parts []string
		for range n {
			parts = append(parts, ws()+randValue(depth+1)+ws())
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return randScalar()
}

func randObject(depth, n int) string {
	if n == 0 {
		n = rng.IntN(6)
	}
	var parts []string
	var keys []string
	for range n {
		k := randKey()
		if len(keys) > 0 && rng.IntN(15) == 0 {
			k = keys[rng.IntN(len(keys))] // a duplicate
		}
		keys = append(keys, k)
		parts = append(parts, ws()+encString(k)+ws()+":"+ws()+randValue(depth)+ws())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func randKeyDoc() string {
	conn := []string{"source-file-01", "inventory-connector", "eu->us.MirrorSourceConnector", "jdbc-src", "c"}[rng.IntN(5)]
	if rng.IntN(5) == 0 {
		conn = randText(rng.IntN(10))
	}
	return ws() + "[" + ws() + encString(conn) + ws() + "," + ws() + randObject(1, 0) + ws() + "]" + ws()
}

var fixedKeys = []string{
	`["source-file-01",{"filename":"/data/testdata.txt"}]`,
	`["inventory-connector",{"server":"dbserver1"}]`,
	`["eu->us.MirrorSourceConnector",{"cluster":"eu","partition":0,"topic":"orders"}]`,
	`["eu->us.MirrorSourceConnector",{"topic":"orders","partition":0,"cluster":"eu"}]`,
	`["eu->us.MirrorCheckpointConnector",{"partition":3,"topic":"orders","group":"billing"}]`,
	`["eu->us.MirrorHeartbeatConnector",{"sourceClusterAlias":"eu","targetClusterAlias":"us"}]`,
	`["jdbc",{"protocol":"1","table":"db.tbl"}]`,
	`["jdbc",{"table":"db.tbl","protocol":"1"}]`,
	`["jdbc",{"table":"db.tbl"}]`,
	`["sqlserver",{"server":"s1","database":"testDB"}]`,
	`["mongo",{"server_id":"m1","rs":"rs0"}]`,
	`["eu-\u003eus.MirrorSourceConnector",{"topic":"t","partition":1,"cluster":"eu"}]`,
	`["c",{"s":"a\/b<>&\u2028\u2029` + "\u2028\u007f" + `"}]`,
	`["c",{"s":"\ud83d\ude00","t":"😀","u":"\uD83D\uDE00"}]`,
	`["c",{"s":"\ud800","t":"\udc00x","u":"\udbff","v":"\ud800\ud800\udc00"}]`,
	"[\"c\",{\"s\":\"\xed\xa0\xbd\xed\xb8\x80\",\"t\":\"\xed\xa0\x80\"}]",
	`["c",{"s":"\u0000\u0001\b\t\n\u000b\f\r\u001f\u0020\"\\"}]`,
	`["c",{"Aa":1,"BB":2}]`, `["c",{"BB":1,"Aa":2}]`,
	`["c",{"a":1,"a":2}]`, `["c",{"a":1,"b":2,"a":3}]`,
	`["c",{"n":[1,{"z":1,"a":2}],"o":{"y":1,"b":[]}}]`,
	`["c",{}]`, `[ "c" , { } ]`, "\ufeff[\"c\",{}]", "\ufeff \n[\"c\",{}]\n ",
	`["c",{"p":1}]  `, `["c",{"p":1}]x`, `["c",{"p":1}]]`, `["c",{"p":1}] {"junk"`, `["c",{"p":1}]` + "\x00\xff",
	``, ` `, "\n\t", `null`, `"c"`, `1`, `true`, `{}`, `{"a":1}`, `[]`, `["c"]`, `["c",{},1]`,
	`[1,{}]`, `[null,{}]`, `[true,{}]`, `[{},{}]`, `[["c"],{}]`, `["c",null]`, `["c",[]]`, `["c","p"]`, `["c",1]`,
	`["c",{"a":NaN}]`, `["c",{"a":Infinity}]`, `["c",{'a':1}]`, `['c',{}]`, `["c",{a:1}]`, `["c",{"a":1,}]`,
	`["c",{},]`, `["c",{"a":1}/*x*/]`, `["c",{"a":+1}]`, `["c",{"a":.5}]`, `["c",{"a":1.}]`, `["c",{"a":1e}]`,
	`["c",{"a":-}]`, `["c",{"a":0x10}]`, `["c",{"a":1.5.5}]`, `["c",{"a":01.5}]`, `["c",{"a":-01}]`,
	`["c",{"a":"\x"}]`, `["c",{"a":"\u12"}]`, `["c",{"a":"\u12g4"}]`, `["c",{"a":"\U0041"}]`, "[\"c\",{\"a\":\"\t\"}]",
	"[\"c\",{\"a\":\"\x7f\"}]", "[\"c\",{\"a\":\"\x80\"}]", "[\"c\",{\"a\":\"\xc0\x80\"}]", "[\"c\",{\"a\":\"\xf5\x80\x80\x80\"}]",
	"[\"c\",{\"a\":\"\xe2\x82\"}]", "[\"c\",{\"a\":\"\xed\xbf\xbf\"}]", "[\"c\",{\"a\":\"\xef\xbf\xbf\"}]",
	`["c",{"a":1}`, `["c",{"a":1]`, `["c",{"a"}]`, `["c",{"a":}]`, `["c",{"a" 1}]`, `["c" {"a":1}]`,
	`["c",{"a":tru}]`, `["c",{"a":nul}]`, `["c",{"a":truex}]`, `["c",{"a":True}]`, `["c",{"a":1 2}]`,
	"[\"c\",{\"a\":1}\v]", "[\"c\",\f{}]", "\x00[\"c\",{}]", `["c",{"a":"unterminated}]`,
	`["c",{"":1,"\u0000":2}]`, `["",{"a":1}]`,
	"[\"c\",{\"\xc0\x80\":\"\xc0\x80\",\"\xe0\x80\x80\":\"\xc1\xbf\"}]",
	"[\"c\",{\"\xf0\x80\x80\x80\":\"\xf0\x80\x80\x80\",\"n\":\"\xf0\x8f\xbf\xbf\"}]",
	"[\"c\",{\"\xf0\x8f\xbf\xbf\":1,\"\xf4\x90\x80\x80\":\"\xf7\xbf\xbf\xbf\"}]",
	"[\"\xf5\x80\x80\x80\",{\"\xf4\x8f\xbf\xbf\":\"\xf0\x90\x80\x80\"}]",
	"[\"c\",{\"a\":\"\xf8\x80\x80\x80\x80\"}]", "[\"c\",{\"\xc3\":1}]", "[\"c\",{\"\xe2\x28\xa1\":1}]",
}

func mutate(s string) string {
	b := []byte(s)
	interesting := []byte{'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', '-', '.', 'e', 'u', 0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xed, 0xff}
	switch rng.IntN(3) {
	case 0:
		if len(b) > 0 {
			i := rng.IntN(len(b))
			b = append(b[:i], b[i+1:]...)
		}
	case 1:
		i := rng.IntN(len(b) + 1)
		b = append(b[:i], append([]byte{interesting[rng.IntN(len(interesting))]}, b[i:]...)...)
	default:
		if len(b) > 0 {
			b[rng.IntN(len(b))] = interesting[rng.IntN(len(interesting))]
		}
	}
	return string(b)
}

func keyInputs() []string {
	keys := append([]string(nil), fixedKeys...)
	var valid []string
	for range 700 {
		valid = append(valid, randKeyDoc())
	}
	keys = append(keys, valid...)
	for range 700 {
		keys = append(keys, mutate(valid[rng.IntN(len(valid))]))
	}
	return keys
}

func valueInputs() []string {
	fixed := []string{"", " ", "\n", "null", " null ", "{}", "[]", "1", `"s"`, "true", `{"offset":5}`,
		`{"position":1024}`, `{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":154,"row":1,"snapshot":true}`,
		`{"lsn":24023128,"txId":555,"ts_usec":1559033904863123}`, `{"kafka_offset":5}`, `{"offset":0}`,
		`{"a":1.0E7,"b":1e-4,"c":-0.0,"d":1e400}`, `{"a":1}x`, `{"a":1`, `nul`, "\ufeff{}", `{"a":[1,2],"b":{"c":null}}`}
	out := []string{"nil"}
	for _, s := range fixed {
		out = append(out, b64(s))
	}
	for range 300 {
		out = append(out, b64(ws()+randObject(1, 0)+ws()))
	}
	for range 200 {
		out = append(out, b64(mutate(randObject(1, 1+rng.IntN(4)))))
	}
	return out
}

func pairInputs() []string {
	pairs := [][2]string{
		{`["c",{"a":1,"b":2}]`, `["c",{"b":2,"a":1}]`},
		{`["c",{"a":1}]`, `["c",{"a":1.0}]`},
		{`["c",{"a":1}]`, `["c",{"a":"1"}]`},
		{`["c",{"a":1}]`, `["c",{"a":001}]`},
		{`["c",{"a":1.0}]`, `["c",{"a":1E0}]`},
		{`["c",{"a":0.0}]`, `["c",{"a":-0.0}]`},
		{`["c",{"a":0.0}]`, `["c",{"a":-1e-400}]`},
		{`["c",{"a":1e400}]`, `["c",{"a":"Infinity"}]`},
		{`["c",{"a":1}]`, `["c",{"a":18446744073709551617}]`},
		{`["c",{"a":null}]`, `["c",{}]`},
		{`["c",{"a":true}]`, `["c",{"a":"true"}]`},
		{`["c",{"s":"\u00e9"}]`, `["c",{"s":"é"}]`},
		{`["c",{"s":"\ud83d\ude00"}]`, `["c",{"s":"😀"}]`},
		{`["c",{"a":1,"a":2}]`, `["c",{"a":2}]`},
		{`["c",{"a":[1,2]}]`, `["c",{"a":[2,1]}]`},
		{`["c",{"a":{"x":1,"y":2}}]`, `["c",{"a":{"y":2,"x":1}}]`},
		{`["c",{"a":1}]`, `["d",{"a":1}]`},
	}
	var out []string
	for _, p := range pairs {
		out = append(out, b64(p[0])+"\t"+b64(p[1]))
	}
	for range 300 {
		a, b := equivalentKeys()
		out = append(out, b64(a)+"\t"+b64(b))
	}
	return out
}

// equivalentKeys returns two encodings of one partition, in different field
// orders and spellings, and sometimes with one value's type changed.
func equivalentKeys() (string, string) {
	type field struct{ k, a, b string }
	var fs []field
	seen := map[string]bool{}
	for range 1 + rng.IntN(6) {
		k := randKey()
		if seen[k] {
			continue
		}
		seen[k] = true
		var f field
		f.k = k
		switch rng.IntN(5) {
		case 0:
			t := randText(rng.IntN(6))
			f.a, f.b = encString(t), encString(t)
		case 1:
			n := rng.IntN(100000)
			f.a, f.b = strconv.Itoa(n), strconv.Itoa(n)
			if rng.IntN(2) == 0 {
				f.b = "00" + f.b
			}
		case 2:
			x := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			f.a, f.b = strconv.FormatFloat(x, 'g', -1, 64), strconv.FormatFloat(x, 'e', -1, 64)
			if !strings.ContainsAny(f.a, ".e") {
				f.a += ".0"
			}
		case 3:
			f.a = []string{"true", "false", "null"}[rng.IntN(3)]
			f.b = f.a
		default:
			f.a, f.b = "1", []string{"1.0", `"1"`, "1", "true", "null"}[rng.IntN(5)]
		}
		fs = append(fs, f)
	}
	enc := func(pick func(field) string) string {
		var parts []string
		for _, f := range fs {
			parts = append(parts, ws()+encString(f.k)+ws()+":"+ws()+pick(f)+ws())
		}
		return `["c",{` + strings.Join(parts, ",") + `}]`
	}
	a := enc(func(f field) string { return f.a })
	rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	b := enc(func(f field) string { return f.b })
	return a, b
}
