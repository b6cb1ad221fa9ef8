package io.datamem.cuda.provider;

import io.datamem.cuda.CudaManagedAllocator.Attach;
import io.datamem.spi.ProviderTerm;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@code cuda:...} handler-name grammar, without a GPU. */
class CudaTermTest {

    private static CudaTerm parse(String name) {
        List<ProviderTerm> terms = ProviderTerm.split(name);
        return CudaTerm.parse(terms.get(0), name);
    }

    private static String error(String name) {
        return assertThrows(IllegalArgumentException.class, () -> parse(name), name).getMessage();
    }

    @Test
    void everyKindWithItsDefaults() {
        CudaTerm pinned = parse("cuda:pinned");
        assertEquals(CudaTerm.Kind.PINNED, pinned.kind());
        assertEquals(0, pinned.device());
        assertFalse(pinned.portable() || pinned.mapped() || pinned.writeCombined() || pinned.readOnly());
        assertEquals(CudaTerm.Kind.DEVICE, parse("cuda:device").kind());
        assertEquals(3, parse("cuda:device=3").device());
        CudaTerm managed = parse("cuda:managed=1");
        assertEquals(CudaTerm.Kind.MANAGED, managed.kind());
        assertEquals(1, managed.device());
        assertEquals(Attach.GLOBAL, managed.attach());
        CudaTerm registered = parse("cuda:registered");
        assertEquals(CudaTerm.Kind.REGISTERED, registered.kind());
        assertNull(registered.upstream(), "default upstream: page-aligned host memory");
    }

    @Test
    void options() {
        CudaTerm p = parse("cuda:pinned=2,portable,mapped,writecombined");
        assertEquals(2, p.device());
        assertTrue(p.portable() && p.mapped() && p.writeCombined());
        assertTrue(parse("cuda:pinned,wc").writeCombined());
        assertTrue(parse("cuda:pinned, Write-Combined ").writeCombined(), "case and blanks are forgiven");
        assertEquals(Attach.HOST, parse("cuda:managed=0,attach=host").attach());
        assertEquals(Attach.GLOBAL, parse("cuda:managed,attach=global").attach());
        CudaTerm r = parse("cuda:registered=1,portable,mapped,readonly(numa:bind=0(hugepages:2m))");
        assertEquals(1, r.device());
        assertTrue(r.portable() && r.mapped() && r.readOnly());
        assertEquals("numa:bind=0(hugepages:2m)", r.upstream());
        assertEquals("numa:local+stats", parse("cuda:registered(numa:local+stats)+limit=1g").upstream(),
                "adaptors inside the parentheses belong to the upstream");
    }

    @Test
    void canonicalSpellingsParseToEqualTerms() {
        for (String name : List.of("cuda:pinned", "cuda:pinned=1,portable,mapped,writecombined", "cuda:device=7",
                "cuda:managed=0,attach=host", "cuda:registered=2,readonly(aligned:4096)", "cuda:registered")) {
            CudaTerm t = parse(name);
            assertEquals(t, parse(t.canonical()), name + " -> " + t.canonical());
        }
        assertEquals("cuda:registered=0,mapped(numa:local)", parse("cuda:registered,mapped(numa:local)").canonical());
    }

    @Test
    void mistakesNameTheProblemAndTheForms() {
        assertTrue(error("cuda").contains("expected a kind after 'cuda:'"));
        assertTrue(error("cuda:").contains("expected a kind after 'cuda:'"));
        String unknown = error("cuda:texture");
        assertTrue(unknown.startsWith("handler name 'cuda:texture': 'cuda:texture': unknown kind 'texture'"), unknown);
        assertTrue(unknown.contains("cuda:registered[=N]"), "lists the forms: " + unknown);
        assertTrue(error("cuda:device=x").contains("device ordinal 'x' is not a number"));
        assertTrue(error("cuda:device=-1").contains("device ordinal -1 is negative"));
        assertTrue(error("cuda:device,portable").contains("unknown option 'portable' for cuda:device (its options: none)"));
        assertTrue(error("cuda:pinned,readonly").contains("its options: portable, mapped, writecombined"));
        assertTrue(error("cuda:registered,writecombined").contains("its options: portable, mapped, readonly"));
        assertTrue(error("cuda:managed,attach=single").contains("attach is global or host"));
        assertTrue(error("cuda:pinned,,mapped").contains("empty option"));
        assertTrue(error("cuda:pinned(aligned64)").contains("takes no upstream in parentheses"));
        assertTrue(error("cuda:pinned(aligned64)").contains("pool(cuda:pinned)"), "points at pooling");
        assertTrue(error("cuda:registered()").contains("empty parentheses"));
    }
}
