// Oracle reproduces, with real Jackson and the JDK, what Kafka Connect's
// internal JsonConverter (schemas.enable=false) and REST API do, so that the
// golden files beside it can be regenerated. See gen.sh. Not part of the build.
//
// Usage: java -cp <jackson jars> Oracle.java MODE < MODE.in > MODE.golden
//   keys     each line: base64 key bytes -> OK canonical-key REST-partition | REJECT reason
//   values   each line: base64 value bytes (or "nil") -> OK REST-offset | TOMBSTONE | NULL | NOTOBJECT | REJECT
//   pairs    each line: base64 key \t base64 key -> equals of the decoded partitions
//   hashmap  each line: JSON array of keys -> JSON array in new HashMap<>() iteration order
//   doubles  each line: hex bits of a double -> Double.toString and Jackson's bytes
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

public class Oracle {
    // As org.apache.kafka.connect.json.JsonConverter/JsonDeserializer/JsonSerializer (Kafka 3.6+).
    static final JsonNodeFactory F = new JsonNodeFactory(true);
    static final ObjectMapper DESER = new ObjectMapper();
    static final ObjectMapper SER = new ObjectMapper();
    static final ObjectMapper REST = new ObjectMapper(); // JacksonJsonProvider's default mapper
    static {
        DESER.enable(JsonReadFeature.ALLOW_LEADING_ZEROS_FOR_NUMBERS.mappedFeature());
        DESER.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
        DESER.setNodeFactory(F);
        SER.setNodeFactory(F);
    }

    // JsonConverter.convertToConnect with schema == null.
    static Object toConnect(JsonNode n) {
        switch (n.getNodeType()) {
            case NULL: case MISSING: return null;
            case BOOLEAN: return n.booleanValue();
            case NUMBER: return n.isIntegralNumber() ? (Object) n.longValue() : (Object) n.doubleValue();
            case STRING: return n.textValue();
            case ARRAY: {
                ArrayList<Object> l = new ArrayList<>();
                for (JsonNode e : n) l.add(toConnect(e));
                return l;
            }
            case OBJECT: {
                Map<Object, Object> m = new HashMap<>();
                Iterator<Map.Entry<String, JsonNode>> it = n.fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    m.put(e.getKey(), toConnect(e.getValue()));
                }
                return m;
            }
            default: throw new IllegalStateException("node type " + n.getNodeType());
        }
    }

    // JsonConverter.convertToJson with schema == null.
    static JsonNode toJson(Object v) {
        if (v == null) return null;
        if (v instanceof Long) return F.numberNode((Long) v);
        if (v instanceof Integer) return F.numberNode((Integer) v);
        if (v instanceof Double) return F.numberNode((Double) v);
        if (v instanceof Boolean) return F.booleanNode((Boolean) v);
        if (v instanceof String) return F.textNode((String) v);
        if (v instanceof Collection) {
            ArrayNode a = F.arrayNode();
            for (Object e : (Collection<?>) v) a.add(toJson(e));
            return a;
        }
        if (v instanceof Map) {
            ObjectNode o = F.objectNode();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) o.set((String) e.getKey(), toJson(e.getValue()));
            return o;
        }
        throw new IllegalStateException("type " + v.getClass());
    }

    // JsonConverter.toConnectData, throwing on what Connect reports as a DataException.
    static Object decode(byte[] b) throws Exception {
        JsonNode n = DESER.readTree(b);
        return n == null ? null : toConnect(n);
    }

    static String b64(byte[] b) { return Base64.getEncoder().encodeToString(b); }
    static byte[] unb64(String s) { return Base64.getDecoder().decode(s); }

    // OffsetUtils.processPartitionKey: the partition, or a reason it is ignored.
    @SuppressWarnings("unchecked")
    static Object partition(byte[] key) {
        Object k;
        try {
            k = decode(key);
        } catch (Exception e) {
            return "SYNTAX";
        }
        if (!(k instanceof List)) return "NOTLIST";
        List<Object> l = (List<Object>) k;
        if (l.size() != 2) return "SIZE";
        if (!(l.get(0) instanceof String)) return "NAME";
        if (!(l.get(1) instanceof Map)) return l.get(1) == null ? "NULLPARTITION" : "PARTITION";
        return l;
    }

    static void put(ByteArrayOutputStream out, Object... parts) {
        for (Object p : parts) out.writeBytes(String.valueOf(p).getBytes(StandardCharsets.US_ASCII));
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        // Output is written as bytes: a String holding a lone surrogate would not survive a Writer.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String line;
        while ((line = in.readLine()) != null) {
            switch (args[0]) {
                case "keys": {
                    Object p = partition(unb64(line));
                    if (p instanceof String) {
                        put(out, "REJECT\t", p);
                    } else {
                        List<?> l = (List<?>) p;
                        byte[] canon = SER.writeValueAsBytes(toJson(Arrays.asList(l.get(0), l.get(1))));
                        put(out, "OK\t", b64(canon), "\t", b64(REST.writeValueAsBytes(l.get(1))));
                    }
                    break;
                }
                case "values": {
                    if (line.equals("nil")) { put(out, "TOMBSTONE\n"); continue; }
                    Object v;
                    try {
                        v = decode(unb64(line));
                    } catch (Exception e) {
                        put(out, "REJECT");
                        break;
                    }
                    if (v == null) put(out, "NULL");
                    else if (!(v instanceof Map)) put(out, "NOTOBJECT");
                    else put(out, "OK\t", b64(REST.writeValueAsBytes(v)));
                    break;
                }
                case "pairs": {
                    String[] f = line.split("\t");
                    Object a = partition(unb64(f[0])), b = partition(unb64(f[1]));
                    put(out, ((List<?>) a).get(1).equals(((List<?>) b).get(1)));
                    break;
                }
                case "hashmap": {
                    HashMap<String, Integer> m = new HashMap<>();
                    for (JsonNode k : DESER.readTree(line)) m.put(k.textValue(), 0);
                    ArrayNode a = F.arrayNode();
                    for (String k : m.keySet()) a.add(k);
                    out.write(SER.writeValueAsBytes(a));
                    break;
                }
                case "doubles": {
                    double d = Double.longBitsToDouble(Long.parseUnsignedLong(line, 16));
                    out.write((Double.toString(d) + "\t").getBytes(StandardCharsets.UTF_8));
                    out.write(SER.writeValueAsBytes(F.numberNode(d)));
                    break;
                }
                default: throw new IllegalArgumentException("mode " + args[0]);
            }
            out.write('\n');
        }
        System.out.write(out.toByteArray());
        System.out.flush();
    }
}
