/**
 * Shell completion, the way cobra-based tools (kubectl, helm) do it: the
 * shell script is small and asks the command itself what may come next —
 * `workloadspread __complete <words so far> <word being typed>` prints one
 * candidate per line, then `:<directive>` (cobra's bit set: 4 = no file
 * completion, 16 = directories only, 0 = let the shell complete file names).
 * kubectl (1.26+) asks a plugin the same question through an executable
 * named `kubectl_complete-<plugin>` on PATH, which the package installs
 * (bin/kubectl_complete-workloadspread.js), so `kubectl workloadspread <TAB>`
 * completes too.
 *
 * Candidates come from the commander definition (main.ts): sub-commands,
 * their flags, the choices of flags and arguments (`-o json|yaml|…`,
 * `manifests install|crd`); a value named `<file>` or `<path>` lets the shell
 * complete file names, `<dir>` directories. What only the cluster knows is
 * asked of it, as kubectl's completion does: the WorkloadSpread names of
 * `status NAME`, the namespaces of `-n`, and the contexts, clusters and users
 * of the kubeconfig for `--context`, `--cluster`, `--user`. `completeWords`
 * says what to ask (`query`, with the flags typed so far, wherever they are
 * on the line); completion-cluster.ts asks it. Pure apart from the commander
 * objects it reads.
 *
 * The scripts: bash, zsh and fish, each a thin wrapper around `__complete`.
 */
import type { Argument, Command, Option } from 'commander';
import { camel, globalFlagOf } from './kube-flags.ts';

/** cobra's ShellCompDirective values. */
export const DIRECTIVE = { default: 0, noSpace: 2, noFileComp: 4, filterDirs: 16 } as const;

export interface Completions {
  candidates: string[];
  directive: number;
  /** Candidates only the cluster or the kubeconfig knows (completion-cluster.ts answers it). */
  query?: ClusterQuery;
}

export interface ClusterQuery {
  what: 'workloadspreads' | 'namespaces' | 'contexts' | 'clusters' | 'users';
  /** The start of the word being completed. */
  prefix: string;
  /** Put before each candidate (`--namespace=`). */
  insert: string;
  /** The values of the flags typed so far, by commander's attribute name (`namespace`, `context`, `asGroup`, ...). */
  flags: Record<string, unknown>;
}

/** Which flag values the cluster completes. */
const QUERIED_FLAGS: Readonly<Record<string, ClusterQuery['what']>> = { '--namespace': 'namespaces', '--context': 'contexts', '--cluster': 'clusters', '--user': 'users' };
/** Which commands' NAME argument is a WorkloadSpread. */
const NAMED_COMMANDS = new Set(['status']);

const FILE_VALUES = new Set(['file', 'file...', 'path']);
const DIR_VALUES = new Set(['dir']);

/** The value placeholder of an option (`<file...>` → `file...`), or undefined for a flag without a value. */
function placeholder(option: Option): string | undefined {
  const m = /[<[]([^>\]]+)[>\]]/.exec(option.flags);
  return m?.[1];
}

function takesValue(option: Option): boolean {
  // `[bool]` values are optional: the next word is a value only when written as --flag=value.
  return option.required === true;
}

function valueCompletions(choices: readonly string[] | undefined, name: string | undefined, prefix: string): Completions {
  if (choices !== undefined && choices.length > 0) {
    const candidates = choices.filter((c) => c.startsWith(prefix));
    // `jsonpath=` goes on with its template: no space after it.
    const open = candidates.length > 0 && candidates.every((c) => c.endsWith('='));
    return { candidates, directive: DIRECTIVE.noFileComp | (open ? DIRECTIVE.noSpace : 0) };
  }
  if (name !== undefined && FILE_VALUES.has(name)) return { candidates: [], directive: DIRECTIVE.default };
  if (name !== undefined && DIR_VALUES.has(name)) return { candidates: [], directive: DIRECTIVE.filterDirs };
  return { candidates: [], directive: DIRECTIVE.noFileComp };
}

function findOption(command: Command, word: string): Option | undefined {
  const name = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
  return command.options.find((o) => o.long === name || o.short === name);
}

function visibleCommands(command: Command): Command[] {
  return command
    .createHelp()
    .visibleCommands(command)
    .filter((c) => c.name() !== 'help');
}

/** A flag as completion sees it: the command's own option, else one of kubectl's global flags. */
interface FlagInfo {
  long: string;
  takesValue: boolean;
  repeatable: boolean;
  /** The value's placeholder (`file`, `dir`, ...). */
  value?: string;
  option?: Option;
}

function flagInfo(command: Command, word: string): FlagInfo | undefined {
  const option = findOption(command, word);
  if (option !== undefined) {
    const value = placeholder(option);
    return { long: option.long ?? option.short ?? '', takesValue: takesValue(option), repeatable: option.variadic, ...(value === undefined ? {} : { value }), option };
  }
  const global = globalFlagOf(word);
  if (global === undefined) return undefined;
  return { long: `--${global.spec.long}`, takesValue: global.spec.value !== undefined, repeatable: global.spec.repeatable === true, ...(global.spec.value === undefined ? {} : { value: global.spec.value }) };
}

function recordValue(flags: Record<string, unknown>, info: FlagInfo, value: string): void {
  const key = camel(info.long.replace(/^-+/, ''));
  if (info.repeatable || key === 'asGroup') flags[key] = [...((flags[key] as string[] | undefined) ?? []), value];
  else flags[key] = value;
}

/** The inline value of `--flag=value` or `-nvalue`, if the word carries one. */
function inlineValue(word: string): string | undefined {
  if (word.startsWith('--')) return word.includes('=') ? word.slice(word.indexOf('=') + 1) : undefined;
  return word.length > 2 ? word.slice(2).replace(/^=/, '') : undefined;
}

function queried(info: FlagInfo | undefined, prefix: string, insert: string, flags: Record<string, unknown>): Completions | undefined {
  const what = info === undefined ? undefined : QUERIED_FLAGS[info.long];
  if (what === undefined) return undefined;
  return { candidates: [], directive: DIRECTIVE.noFileComp, query: { what, prefix, insert, flags } };
}

/** What may follow `words` (the last word is the one being completed; empty after a space). */
export function completeWords(program: Command, words: readonly string[]): Completions {
  const done = words.slice(0, -1);
  const current = words.at(-1) ?? '';
  let command = program;
  let pending: FlagInfo | undefined;
  let positional = 0;
  let afterDashes = false;
  const flags: Record<string, unknown> = {};
  for (const word of done) {
    if (pending !== undefined) {
      recordValue(flags, pending, word);
      pending = undefined;
      continue;
    }
    if (!afterDashes && word === '--') {
      afterDashes = true;
      continue;
    }
    if (!afterDashes && word.startsWith('-') && word !== '-') {
      const info = flagInfo(command, word);
      if (info === undefined) continue;
      const inline = info.takesValue ? inlineValue(word) : undefined;
      if (inline !== undefined) recordValue(flags, info, inline);
      else if (info.takesValue) pending = info;
      else flags[camel(info.long.replace(/^-+/, ''))] = true;
      continue;
    }
    const sub = command === program ? visibleCommands(command).find((c) => c.name() === word || c.aliases().includes(word)) : undefined;
    if (sub !== undefined) {
      command = sub;
      continue;
    }
    positional++;
  }

  if (pending !== undefined) {
    return queried(pending, current, '', flags) ?? valueCompletions(pending.option?.argChoices, pending.value, current);
  }
  if (!afterDashes && current.startsWith('--') && current.includes('=')) {
    const info = flagInfo(command, current);
    const prefix = current.slice(0, current.indexOf('=') + 1);
    if (info === undefined) return { candidates: [], directive: DIRECTIVE.noFileComp };
    const asked = queried(info, current.slice(prefix.length), prefix, flags);
    if (asked !== undefined) return asked;
    const values = valueCompletions(info.option?.argChoices, info.value, current.slice(prefix.length));
    return { candidates: values.candidates.map((v) => prefix + v), directive: values.directive };
  }
  if (!afterDashes && current.startsWith('-')) {
    const flagNames = command
      .createHelp()
      .visibleOptions(command)
      .flatMap((o) => [o.long, ...(current.startsWith('--') ? [] : [o.short])])
      .filter((f): f is string => f !== undefined && f.startsWith(current));
    if (command === program) flagNames.push(...['--help', '--version'].filter((f) => f.startsWith(current) && !flagNames.includes(f)));
    return { candidates: [...new Set(flagNames)], directive: DIRECTIVE.noFileComp };
  }
  if (command === program) {
    return { candidates: visibleCommands(program).map((c) => c.name()).filter((n) => n.startsWith(current)), directive: DIRECTIVE.noFileComp };
  }
  const args: readonly Argument[] = command.registeredArguments;
  const arg = args[Math.min(positional, args.length - 1)];
  if (arg === undefined || (positional >= args.length && !arg.variadic)) return { candidates: [], directive: DIRECTIVE.noFileComp };
  if (positional === 0 && arg.name() === 'name' && NAMED_COMMANDS.has(command.name())) {
    return { candidates: [], directive: DIRECTIVE.noFileComp, query: { what: 'workloadspreads', prefix: current, insert: '', flags } };
  }
  return valueCompletions(arg.argChoices, arg.name(), current);
}

/** cobra's output format: one candidate per line, then `:<directive>`. */
export function formatCompletions(c: Pick<Completions, 'candidates' | 'directive'>): string {
  return `${c.candidates.map((x) => `${x}\n`).join('')}:${c.directive}\n`;
}

/** The executable the script completes: `workloadspread`, or `kubectl-workloadspread` for the plugin's name. */
function executable(programName: string): string {
  return programName.replace(/ /g, '-');
}

function identifier(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, '_');
}

function bashScript(name: string): string {
  const fn = `__${identifier(name)}_complete`;
  return `# bash completion for ${name}
# Load it in this shell:      source <(${name} completion bash)
# Or for every new shell:     ${name} completion bash > ~/.local/share/bash-completion/completions/${name}
${fn}() {
    local cur="\${COMP_WORDS[COMP_CWORD]}"
    local out directive
    out=$("\${COMP_WORDS[0]}" __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return 0
    directive="\${out##*:}"
    out="\${out%:*}"
    COMPREPLY=()
    local line
    while IFS='' read -r line; do
        [[ -n "$line" ]] && COMPREPLY+=("$line")
    done <<< "$out"
    if (( directive & 2 )); then
        compopt -o nospace 2>/dev/null
    fi
    if (( \${#COMPREPLY[@]} == 0 )); then
        if (( directive & 16 )); then
            compopt -o dirnames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
        elif (( (directive & 4) == 0 )); then
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
    fi
    return 0
}
complete -F ${fn} ${name}
`;
}

function zshScript(name: string): string {
  const fn = `_${identifier(name)}`;
  return `#compdef ${name}
# zsh completion for ${name}
# Load it in this shell:      source <(${name} completion zsh)
# Or for every new shell:     ${name} completion zsh > "\${fpath[1]}/_${name}"
${fn}() {
  local out directive
  local -a lines
  out=$("\${words[1]}" __complete "\${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
  lines=("\${(@f)out}")
  directive="\${lines[-1]#:}"
  lines=("\${(@)lines[1,-2]}")
  lines=("\${(@)lines:#}")
  if (( \${#lines} )); then
    if (( directive & 2 )); then
      compadd -Q -S '' -- "\${lines[@]}"
    else
      compadd -Q -- "\${lines[@]}"
    fi
  elif (( directive & 16 )); then
    _files -/
  elif (( (directive & 4) == 0 )); then
    _files
  fi
}
if [[ "\${funcstack[1]}" = "${fn}" ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${name}
fi
`;
}

function fishScript(name: string): string {
  const fn = `__${identifier(name)}_complete`;
  return `# fish completion for ${name}
# Load it in this shell:      ${name} completion fish | source
# Or for every new shell:     ${name} completion fish > ~/.config/fish/completions/${name}.fish
function ${fn}
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l out ($words[1] __complete $words[2..-1] $current 2>/dev/null)
    or return
    set -l directive (string replace -r '^:' '' -- $out[-1])
    set -e out[-1]
    if test (count $out) -gt 0
        printf '%s\\n' $out
    else if test (math "bitand($directive, 16)") -ne 0
        __fish_complete_directories $current
    else if test (math "bitand($directive, 4)") -eq 0
        __fish_complete_path $current
    end
end
complete -c ${name} -f -a '(${fn})'
`;
}

export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/** The script `completion bash|zsh|fish` prints for the program called `programName`. */
export function completionScript(shell: CompletionShell, programName: string): string {
  const name = executable(programName);
  return shell === 'bash' ? bashScript(name) : shell === 'zsh' ? zshScript(name) : fishScript(name);
}
