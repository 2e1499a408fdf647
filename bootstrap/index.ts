// Bootstrap recipes: plain-data recipes, their identity, idempotent apply and
// prewarm. Everything a host or provider needs from bootstrap/.
export { BootstrapError, type BootstrapErrorCode } from './errors.ts';
export {
  bootstrapRecipeFormatVersion,
  bridgeFileName,
  bridgeRecipe,
  defaultBootstrapDir,
  defaultBridgeFile,
  defineBootstrapRecipe,
  maxRecipeFileBytes,
} from './recipe.ts';
export { recipeBytes, recipeIdentity, sdkRecipeIdentity } from './identity.ts';
export {
  applyBootstrap,
  bootstrapLogFileName,
  bootstrapMarkerPath,
  sdkBootstrapMarkerPath,
  defaultMaxLockStaleMs,
  defaultMaxLockWaitMs,
  defaultProgressIntervalMs,
  defaultCommandTimeoutMs,
  maxStderrTailBytes,
  type ApplyBootstrapOptions,
  type ApplyBootstrapResult,
  type BootstrapProgress,
} from './apply.ts';
export { prewarmHarness, type PrewarmResult } from './prewarm.ts';
