package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What a program on the module path sees of aldeia-core (module-info.java): the module resolves
 * with what it requires, exports its API packages and nothing else, and every package it has is
 * either one or the other here, so a new package is classified on purpose.
 */
class ModuleDeclarationTest {

    private static final String MODULE = "org.aldeia.core";
    private static final Set<String> API = Set.of("org.aldeia.core", "org.aldeia.core.config", "org.aldeia.core.spi");
    private static final Set<String> INTERNAL = Set.of("org.aldeia.core.bootstrap", "org.aldeia.core.plain",
            "org.aldeia.core.upgrade");

    @Test
    void exportsTheApiPackagesOnly() throws Exception {
        ModuleDescriptor module = compiledModule();
        Set<String> exported = module.exports().stream().filter(e -> !e.isQualified())
                .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
        assertEquals(API, exported);
        assertTrue(module.exports().stream().noneMatch(ModuleDescriptor.Exports::isQualified));
        assertEquals(union(API, INTERNAL), module.packages(), "a package is neither API nor internal here");
        assertTrue(module.uses().contains("org.aldeia.core.spi.TransportProvider"));
    }

    @Test
    void resolvesOnTheModulePathAndHidesItsInternalPackages() throws Exception {
        ModuleFinder finder = ModuleFinder.of(classesDirectory(), jarOf(org.slf4j.Logger.class));
        Configuration configuration = ModuleLayer.boot().configuration().resolve(finder, ModuleFinder.of(), Set.of(MODULE));
        ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(configuration, ClassLoader.getPlatformClassLoader());
        Module core = layer.findModule(MODULE).orElseThrow();
        Module socket = layer.findLoader(MODULE).loadClass("org.aldeia.core.AldeiaSocket").getModule();
        assertEquals(core, socket);
        for (String api : API) {
            assertTrue(core.isExported(api), api);
        }
        for (String internal : INTERNAL) {
            assertFalse(core.isExported(internal), internal);
        }
    }

    private static ModuleDescriptor compiledModule() throws URISyntaxException {
        return ModuleFinder.of(classesDirectory()).find(MODULE).orElseThrow().descriptor();
    }

    /** target/classes: where AldeiaSocket was loaded from, with module-info.class beside it. */
    private static Path classesDirectory() throws URISyntaxException {
        return jarOf(AldeiaSocket.class);
    }

    private static Path jarOf(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        return List.of(a, b).stream().flatMap(Set::stream).collect(Collectors.toSet());
    }
}
