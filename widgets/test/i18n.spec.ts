import { Gettext, nullTranslator } from '@jupyterlab/translation';

import { IBackend, ILessons } from '../src/api';
import { CourseModel, courseLanguage } from '../src/course';
import { CourseSidebar, CourseStatus, backendLabel } from '../src/sidebar';

import chinese from '../../graphlab/server/locale/zh_CN/LC_MESSAGES/cuda_graphlab.json';

// The sidebar's tab icon needs JupyterLab's icon registry, which these tests have no use for.
jest.mock('@jupyterlab/ui-components', () => ({ LabIcon: class {} }));

/** The extension's words in Chinese, loaded from the shipped JSON as JupyterLab's translator
 * loads a domain's data. */
function zh(): Gettext {
  const bundle = new Gettext({ domain: 'cuda_graphlab', locale: 'zh-CN' });
  const metadata = chinese[''];
  bundle.loadJSON(
    { ...chinese, '': { ...metadata, pluralForms: metadata.plural_forms } },
    'cuda_graphlab'
  );
  return bundle;
}

const english = nullTranslator.load('cuda-graphlab');
const emulator: IBackend = {
  name: 'emulator',
  label: 'CPU emulator · torch 2.5.1',
  gpu: null,
  torch: '2.5.1',
  cuda: null
};
const lessons: ILessons = {
  folder: 'zh_CN',
  done: 1,
  total: 3,
  lessons: [
    {
      path: 'zh_CN/00_start_here.ipynb',
      id: '00_start_here',
      number: '00',
      title: '从这里开始',
      exercises: ['busy_fraction'],
      passed: ['busy_fraction'],
      revealed: ['busy_fraction']
    },
    {
      path: 'zh_CN/01_kernel_gaps.ipynb',
      id: '01_kernel_gaps',
      number: '01',
      title: '内核空隙',
      exercises: ['capture_chain', 'per_replay'],
      passed: [],
      revealed: []
    }
  ]
};

function model(trans: Gettext | typeof english): CourseModel {
  const m = new CourseModel('zh_CN', trans);
  m.lessons = lessons;
  m.backend = emulator;
  return m;
}

describe('the course language', () => {
  it("is JupyterLab's language code as the lessons' folder names it", () => {
    expect(courseLanguage('zh-CN')).toBe('zh_CN');
    expect(courseLanguage('en')).toBe('en');
  });
});

describe('the sidebar and status bar', () => {
  it('speak Chinese with the shipped catalog, the figures and identifiers as they are', () => {
    const trans = zh();
    const sidebar = new CourseSidebar(model(trans), () => undefined, trans);
    const text = (selector: string) =>
      Array.from(sidebar.node.querySelectorAll(selector)).map(n => n.textContent);
    expect(text('.graphlab-Sidebar-title')).toEqual(['CUDA 图课程']);
    expect(text('.graphlab-Sidebar-backend')).toEqual(['CPU 模拟器 · torch 2.5.1']);
    expect(text('.graphlab-Sidebar-lesson')).toEqual([
      '00从这里开始1/1 （1 个看过参考答案）',
      '01内核空隙0/2'
    ]);
    expect(text('.graphlab-Sidebar-overall')).toEqual([
      '已通过的练习：1/3，其中 1 个是在显示参考答案之后通过的'
    ]);
    expect(sidebar.title.caption).toBe('CUDA 图课程');
    const status = new CourseStatus(model(trans), trans);
    expect(status.node.textContent).toBe('CPU 模拟器 · 课程 1/3');
  });

  it('speak English without a translation', () => {
    const sidebar = new CourseSidebar(model(english), () => undefined, english);
    expect(sidebar.node.querySelector('.graphlab-Sidebar-overall')?.textContent).toBe(
      'Exercises passed: 1/3, 1 of them after revealing the solution'
    );
    expect(new CourseStatus(model(english), english).node.textContent).toBe(
      'CPU emulator · course 1/3'
    );
  });

  it("say the backend as the server's label does, in the sidebar's language", () => {
    const cuda: IBackend = {
      name: 'cuda',
      label: '',
      gpu: 'NVIDIA H200',
      torch: '2.11.0',
      cuda: '13.0'
    };
    expect(backendLabel(cuda, zh())).toBe('NVIDIA H200 · torch 2.11.0 · CUDA 13.0');
    expect(backendLabel(emulator, english)).toBe(emulator.label);
    const unknown: IBackend = { ...cuda, name: 'unknown', label: 'backend unknown: no torch' };
    expect(backendLabel(unknown, zh())).toBe('backend unknown: no torch');
  });

  it('count events in the plural form of the language', () => {
    expect(
      zh()._n('%2 event, opened in %3 s', '%2 events, opened in %3 s', 12000, '12,000', '1.5')
    ).toBe('12,000 个事件，打开用时 1.5 s');
    expect(english._n('%2 event, opened in %3 s', '%2 events, opened in %3 s', 1, '1', '0.2')).toBe(
      '1 event, opened in 0.2 s'
    );
  });
});
