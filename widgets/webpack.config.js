/**
 * Extra webpack settings merged into JupyterLab's extension build (package.json names this file).
 *
 * webpack gives each module an id hashed from its name. Every module is named relative to the
 * build folder except the federation container's entry, whose name lists the exposed files by
 * absolute path: its id, and so the bytes of remoteEntry.*.js, changed with the folder the build
 * ran in. This plugin names that one module by a constant before webpack numbers the others, so
 * the same sources give the same build wherever they are built.
 */
class PathFreeContainerEntryId {
  apply(compiler) {
    compiler.hooks.compilation.tap('PathFreeContainerEntryId', compilation => {
      compilation.hooks.beforeModuleIds.tap('PathFreeContainerEntryId', modules => {
        for (const module of modules) {
          if (module.identifier().startsWith('container entry')) {
            compilation.chunkGraph.setModuleId(module, 'container-entry');
          }
        }
      });
    });
  }
}

module.exports = { plugins: [new PathFreeContainerEntryId()] };
