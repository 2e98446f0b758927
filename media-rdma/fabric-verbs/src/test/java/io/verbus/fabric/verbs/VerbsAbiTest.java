package io.verbus.fabric.verbs;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The Java layouts must be the C ABI of the installed rdma-core headers: compiles src/test/c/verbs_abi.c
 * with gcc, runs it, and compares every size, offset and constant. Missing gcc or headers is a failure
 * (with the fix), never a skip: .ci/run installs both.
 */
class VerbsAbiTest
{
    private static final String INSTALL_HINT =
        "install the compiler and the rdma-core headers: apt-get install -y gcc libibverbs-dev (.ci/run does this)";

    @TempDir
    static Path workDir;

    private static Map<String, Long> cAbi;

    @BeforeAll
    static void compileAndRunAbiProgram() throws IOException, InterruptedException
    {
        final Path source = Path.of("src/test/c/verbs_abi.c").toAbsolutePath();
        assertTrue(Files.isRegularFile(source), "ABI program missing: " + source);
        final Path binary = workDir.resolve("verbs_abi");

        final ProcessResult compile;
        try
        {
            compile = run(List.of("gcc", "-Wall", "-Werror", "-o", binary.toString(), source.toString()));
        }
        catch (final IOException ex)
        {
            throw new AssertionError("gcc not found (" + ex.getMessage() + "): " + INSTALL_HINT, ex);
        }
        if (compile.exitCode != 0)
        {
            fail("gcc could not compile the ABI program against <infiniband/verbs.h> (exit " + compile.exitCode +
                "): " + INSTALL_HINT + "\n" + compile.output);
        }

        final ProcessResult result = run(List.of(binary.toString()));
        assertEquals(0, result.exitCode, result.output);
        cAbi = parse(result.output);
    }

    @Test
    void shouldMatchEveryStructSizeAndFieldOffsetWithTheInstalledHeaders()
    {
        final Map<String, Long> javaAbi = new TreeMap<>();
        for (final StructLayout struct : IbvAbi.structs())
        {
            final String structName = struct.name().orElseThrow();
            javaAbi.put("sizeof " + structName, struct.byteSize());
            collectOffsets(structName, "", struct, 0, javaAbi);
        }

        final Map<String, Long> cLayouts = new TreeMap<>();
        cAbi.forEach((key, value) ->
        {
            if (!key.startsWith("const "))
            {
                cLayouts.put(key, value);
            }
        });

        assertFalse(javaAbi.isEmpty());
        assertEquals(cLayouts.keySet(), javaAbi.keySet(),
            "verbs_abi.c must print exactly the fields the Java layouts name");
        final List<String> mismatches = new ArrayList<>();
        javaAbi.forEach((key, value) ->
        {
            if (!value.equals(cLayouts.get(key)))
            {
                mismatches.add(key + ": Java " + value + ", C " + cLayouts.get(key));
            }
        });
        assertTrue(mismatches.isEmpty(), "layouts differ from the C ABI: " + mismatches);
    }

    @Test
    void shouldMatchEveryEnumValueWithTheInstalledHeaders() throws IllegalAccessException
    {
        final Map<String, Long> javaConstants = new TreeMap<>();
        for (final Field field : IbvConstants.class.getDeclaredFields())
        {
            if (Modifier.isStatic(field.getModifiers()) && field.getName().startsWith("IBV_"))
            {
                javaConstants.put("const " + field.getName(), (long)field.getInt(null));
            }
        }
        final Map<String, Long> cConstants = new TreeMap<>();
        cAbi.forEach((key, value) ->
        {
            if (key.startsWith("const "))
            {
                cConstants.put(key, value);
            }
        });

        assertEquals(cConstants, javaConstants);
    }

    @Test
    void shouldPlaceTheInlineVerbsAtTheOpsTableSlotsTheHeadersDeclare()
    {
        // The three calls the hot path makes without an exported symbol.
        assertEquals(cAbi.get("offsetof ibv_context.ops.poll_cq"), IbvAbi.Context.OPS + IbvAbi.ContextOps.POLL_CQ);
        assertEquals(cAbi.get("offsetof ibv_context.ops.post_send"), IbvAbi.Context.OPS + IbvAbi.ContextOps.POST_SEND);
        assertEquals(cAbi.get("offsetof ibv_context.ops.post_recv"), IbvAbi.Context.OPS + IbvAbi.ContextOps.POST_RECV);
        assertEquals(128L, cAbi.get("sizeof ibv_send_wr"));
    }

    private static void collectOffsets(
        final String structName, final String prefix, final GroupLayout group, final long base,
        final Map<String, Long> into)
    {
        for (final MemoryLayout member : group.memberLayouts())
        {
            if (member instanceof PaddingLayout)
            {
                continue;
            }
            final String path = prefix.isEmpty() ?
                member.name().orElseThrow() : prefix + "." + member.name().orElseThrow();
            final long offset =
                base + group.byteOffset(MemoryLayout.PathElement.groupElement(member.name().orElseThrow()));
            if (member instanceof GroupLayout nested)
            {
                collectOffsets(structName, path, nested, offset, into);
            }
            else
            {
                into.put("offsetof " + structName + "." + path, offset);
            }
        }
    }

    private static Map<String, Long> parse(final String output)
    {
        final Map<String, Long> values = new TreeMap<>();
        for (final String line : output.split("\n"))
        {
            if (line.isBlank())
            {
                continue;
            }
            final int lastSpace = line.lastIndexOf(' ');
            values.put(line.substring(0, lastSpace), Long.parseLong(line.substring(lastSpace + 1)));
        }
        return values;
    }

    private record ProcessResult(int exitCode, String output)
    {
    }

    private static ProcessResult run(final List<String> command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(60, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            fail("timed out: " + command);
        }
        return new ProcessResult(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }
}
