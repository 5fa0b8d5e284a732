import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The reseller console, built to console/dist and served by the service under /console/
 * (http/routes/console-app.ts). Vite 8 compiles TSX itself (oxc, React's automatic runtime):
 * no React plugin. Pages and the chart are loaded on demand, so the first load stays small
 * (test/unit/console-bundle-size.test.ts).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  clearScreen: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
    // The entry carries React, the router and react-aria (about 160 KB gzipped; the budget test holds it under 300 KB).
    chunkSizeWarningLimit: 700,
    rolldownOptions: {
      // React Router and TanStack Query mark their modules "use client" (for server components):
      // meaningless in a browser bundle.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
});
