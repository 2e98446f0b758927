package io.verbus.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict little JSON reader for the tests: enough of RFC 8259 to prove the report is well formed (it throws on
 * anything else) and to read its values back.
 */
final class MiniJson
{
    private final String text;
    private int index;

    private MiniJson(final String text)
    {
        this.text = text;
    }

    static Object parse(final String text)
    {
        final MiniJson reader = new MiniJson(text);
        final Object value = reader.value();
        reader.whitespace();
        if (reader.index != text.length())
        {
            throw reader.error("trailing characters");
        }
        return value;
    }

    private Object value()
    {
        whitespace();
        if (index >= text.length())
        {
            throw error("unexpected end");
        }
        final char c = text.charAt(index);
        return switch (c)
        {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> number();
        };
    }

    private Map<String, Object> object()
    {
        final Map<String, Object> map = new LinkedHashMap<>();
        expect('{');
        whitespace();
        if (peek('}'))
        {
            index++;
            return map;
        }
        do
        {
            whitespace();
            final String key = string();
            whitespace();
            expect(':');
            if (null != map.put(key, value()))
            {
                throw error("duplicate key " + key);
            }
            whitespace();
        }
        while (consume(','));
        expect('}');
        return map;
    }

    private List<Object> array()
    {
        final List<Object> list = new ArrayList<>();
        expect('[');
        whitespace();
        if (peek(']'))
        {
            index++;
            return list;
        }
        do
        {
            list.add(value());
            whitespace();
        }
        while (consume(','));
        expect(']');
        return list;
    }

    private String string()
    {
        expect('"');
        final StringBuilder out = new StringBuilder();
        while (true)
        {
            if (index >= text.length())
            {
                throw error("unterminated string");
            }
            final char c = text.charAt(index++);
            if (c == '"')
            {
                return out.toString();
            }
            if (c < 0x20)
            {
                throw error("raw control character in string");
            }
            if (c == '\\')
            {
                final char e = text.charAt(index++);
                switch (e)
                {
                    case '"', '\\', '/' -> out.append(e);
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' ->
                    {
                        out.append((char)Integer.parseInt(text.substring(index, index + 4), 16));
                        index += 4;
                    }
                    default -> throw error("bad escape \\" + e);
                }
            }
            else
            {
                out.append(c);
            }
        }
    }

    private Double number()
    {
        final int start = index;
        while (index < text.length() && "+-0123456789.eE".indexOf(text.charAt(index)) >= 0)
        {
            index++;
        }
        if (start == index)
        {
            throw error("unexpected character '" + text.charAt(index) + "'");
        }
        try
        {
            return Double.parseDouble(text.substring(start, index));
        }
        catch (final NumberFormatException ex)
        {
            throw error("bad number " + text.substring(start, index));
        }
    }

    private Object literal(final String word, final Object value)
    {
        if (!text.startsWith(word, index))
        {
            throw error("expected " + word);
        }
        index += word.length();
        return value;
    }

    private void whitespace()
    {
        while (index < text.length() && " \t\r\n".indexOf(text.charAt(index)) >= 0)
        {
            index++;
        }
    }

    private boolean peek(final char c)
    {
        return index < text.length() && text.charAt(index) == c;
    }

    private boolean consume(final char c)
    {
        if (peek(c))
        {
            index++;
            return true;
        }
        return false;
    }

    private void expect(final char c)
    {
        if (!consume(c))
        {
            throw error("expected '" + c + "'");
        }
    }

    private IllegalArgumentException error(final String what)
    {
        return new IllegalArgumentException(what + " at offset " + index);
    }
}
