// The Jadpo extension: starts `jadpo lsp` for `.jadpo` files and the app's
// `jadpo.yaml` / `package.yaml` manifests. Everything else (diagnostics,
// hover, definitions, quick fixes) comes from the server.

import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const command = vscode.workspace
    .getConfiguration("jadpo")
    .get<string>("server.path", "jadpo");
  const serverOptions: ServerOptions = {
    run: { command, args: ["lsp"], transport: TransportKind.stdio },
    debug: { command, args: ["lsp"], transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "jadpo" },
      { scheme: "file", pattern: "**/jadpo.yaml" },
      { scheme: "file", pattern: "**/package.yaml" },
    ],
    synchronize: {
      // Files changed outside the editor (git checkout, generators).
      fileEvents: vscode.workspace.createFileSystemWatcher(
        "**/{*.jadpo,jadpo.yaml,package.yaml}"
      ),
    },
  };
  client = new LanguageClient("jadpo", "Jadpo", serverOptions, clientOptions);
  context.subscriptions.push(client);
  await client.start();
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
    client = undefined;
  }
}
