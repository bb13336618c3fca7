/** A build failure whose message names the file or field at fault (printed as is by the CLI). */
export class PluginBuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PluginBuildError';
  }
}
