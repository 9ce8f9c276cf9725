// The public API as API Extractor reports, one per entry point of package.json "exports",
// written to api/<entry>.api.md from the built declarations in dist/.
//
//   node scripts/api-report.mjs           check: fails when a report differs from the API
//   node scripts/api-report.mjs --update  rewrite the reports
//
// A new entry point in "exports" gets its report without any change here.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const update = process.argv.includes('--update');
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const reportFolder = join(root, 'api');
mkdirSync(reportFolder, { recursive: true });

let failed = 0;
for (const [subpath, target] of Object.entries(packageJson.exports)) {
  // "." → index, "./gltf-transform" → gltf-transform
  const name = subpath === '.' ? 'index' : subpath.slice(2).replaceAll('/', '-');
  const extractorConfig = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: join(root, target.types),
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            target: 'ES2022',
            lib: ['ES2022', 'DOM'],
            types: ['node'],
            skipLibCheck: true,
          },
          include: [target.types],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: `${name}.api.md`,
        reportFolder,
        reportTempFolder: join(root, 'node_modules', '.cache', 'api-extractor'),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // The report lists what is exported; these two are about how the TSDoc is written,
        // which the report is not the place to police.
        extractorMessageReporting: {
          'ae-missing-release-tag': { logLevel: 'none' },
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    configObjectFullPath: join(root, 'api', `${name}.json`),
    packageJsonFullPath: join(root, 'package.json'),
  });
  const result = Extractor.invoke(extractorConfig, {
    localBuild: update,
    showVerboseMessages: false,
    messageCallback: quiet,
  });
  const report = `api/${name}.api.md`;
  if (result.apiReportChanged && !update) {
    failed++;
    console.error(`${report}: the public API of "${subpath}" changed; review it and run npm run api:update`);
  } else if (!result.succeeded) {
    failed++;
    console.error(`${report}: API Extractor failed (${result.errorCount} errors, ${result.warningCount} warnings)`);
  } else {
    console.log(`${report}: ${result.apiReportChanged ? 'updated' : 'unchanged'}`);
  }
}
if (failed > 0) process.exit(1);

/** Lets errors and warnings through; API Extractor's progress lines are noise here. */
function quiet(message) {
  if (message.logLevel === 'info' || message.logLevel === 'verbose') message.handled = true;
}
